// statedir serve: live updates without a reload. The server streams HEAD (server-sent
// events); when it moves, the page's own address is fetched again and <main> swapped in.
(function () {
  "use strict";
  var body = document.body;
  var live = document.getElementById("live");
  var busy = false;
  var answering = false;  // an answer form the reader has begun to fill in is never swapped away

  function began(event) {
    if (event.target.closest && event.target.closest("form.answer")) { answering = true; }
  }
  document.addEventListener("input", began);
  document.addEventListener("change", began);

  function refresh(head) {
    if (busy || head === body.getAttribute("data-head")) { return; }
    if (answering) {
      live.textContent = "The store moved to " + head.slice(0, 10) + "; your form is kept as it is. " +
        "An answer about a run that changed meanwhile is refused: reload to read it again.";
      return;
    }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        var main = document.getElementById("main");
        var focused = document.activeElement && document.activeElement.id;
        main.innerHTML = fresh.getElementById("main").innerHTML;
        document.getElementById("head").textContent = fresh.getElementById("head").textContent;
        body.setAttribute("data-head", fresh.body.getAttribute("data-head"));
        if (focused && document.getElementById(focused)) { document.getElementById(focused).focus(); }
        live.textContent = "Updated: the store moved to " + head.slice(0, 10) + ".";
      })
      .catch(function () { live.textContent = "The store moved; reload to see it."; })
      .then(function () { busy = false; });
  }

  if (window.EventSource) {
    var events = new EventSource("/events");
    events.addEventListener("head", function (event) { refresh(event.data); });
  } else {
    window.setInterval(function () {
      fetch("/head", { cache: "no-store" }).then(function (r) { return r.json(); })
        .then(function (data) { refresh(data.head || ""); });
    }, 2000);
  }
}());
