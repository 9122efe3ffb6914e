// Runs before the page's stylesheets and modules (a classic script first in <head>, so it can watch their loading).
// A module the network dropped (a phone between networks, or a browser that drops the requests in flight when the
// host's network interfaces change) leaves the page at "Loading…", a dropped stylesheet leaves it unstyled, and the
// browser keeps that failure for the document's life: so the page is loaded again, three times at most, 0.5–2 s
// apart. A document whose stylesheets and modules all loaded clears the count (at its load event, which waits for
// them), so the next drop is tried again.
(function () {
  var KEY = 'gsh-dashboard-reloads';
  var dropped = false;
  window.addEventListener('load', function () {
    if (!dropped) sessionStorage.removeItem(KEY);
  });
  window.addEventListener('error', function (event) {
    var el = event.target;
    var module = el instanceof HTMLScriptElement && el.type === 'module';
    var style = el instanceof HTMLLinkElement && el.rel === 'stylesheet';
    if (!module && !style) return;
    dropped = true;
    var tries = Number(sessionStorage.getItem(KEY) || 0);
    if (tries >= 3) return;
    sessionStorage.setItem(KEY, String(tries + 1));
    setTimeout(function () { location.reload(); }, 500 * Math.pow(2, tries));
  }, true);
})();
