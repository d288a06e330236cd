"""The transition rules, pure over plain data: `decision.decide` (permission, liveness, then the
action's own rules, found in its table `decision.HANDLERS`), and one module per action family:
`stage`, `run` (pipeline, set, redo), `stage_graph` (confirm), `submissions`, `adjudication`,
`checklist`, `gates`, `review_contract`, `entry_advisories`, `compliance`, `inquiry`,
`reset_boundaries`. None touches a file, the clock or git; what is stage-specific comes from the
template. This package's own import loads none of them."""
