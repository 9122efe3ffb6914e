// Runs before the page's modules (a classic script, so it can watch their loading). A module the network dropped (a
// phone between networks, or a browser that drops the requests in flight when the host's network interfaces
// change) leaves the page at "Loading…", and the browser keeps that failure for the document's life: so the page
// is loaded again, three times at most, 0.5–2 s apart. app.js clears the count once it runs.
(function () {
  var KEY = 'gsh-dashboard-reloads';
  window.addEventListener('error', function (event) {
    var script = event.target;
    if (!(script instanceof HTMLScriptElement) || script.type !== 'module') return;
    var tries = Number(sessionStorage.getItem(KEY) || 0);
    if (tries >= 3) return;
    sessionStorage.setItem(KEY, String(tries + 1));
    setTimeout(function () { location.reload(); }, 500 * Math.pow(2, tries));
  }, true);
})();
