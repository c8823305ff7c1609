// The browser side of `/` (origin/player/index-page.ts): plain ES2017, one constant string (its
// hash goes into the page's CSP). Each presentation's filter box asks the origin what an
// expression keeps (`/_filter`, answered as `origin filter --json`), marks the track table's
// rows keep or drop, prints the canonical form, or the error with a caret under its position,
// and offers the result to the players of each format.

export const INDEX_SCRIPT = String.raw`
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('config').textContent);
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function playLinks(urls, expression) {
    var p = el('p');
    p.appendChild(document.createTextNode('play the result: '));
    Object.keys(urls).forEach(function (format) {
      var url = urls[format] + '?filter=' + encodeURIComponent(expression);
      (cfg.players[format] || []).forEach(function (player) {
        var a = el('a', player + ' (' + format + ')');
        a.href = '/play?player=' + encodeURIComponent(player) + '&url=' + encodeURIComponent(url);
        a.className = 'play';
        a.dataset.player = player;
        a.dataset.format = format;
        p.appendChild(a);
        p.appendChild(document.createTextNode(' '));
      });
    });
    return p;
  }
  // The expression with a caret under the UTF-16 offset of the error, as origin filter prints it.
  function caret(expression, offset) {
    return el('pre', expression + '\n' + new Array(Math.min(offset, expression.length) + 1).join(' ') + '^', 'caret');
  }
  function show(form, answer) {
    var section = form.closest('section');
    var result = section.querySelector('.result');
    result.textContent = '';
    var rows = section.querySelectorAll('table.tracks tr[data-track]');
    var body = answer.body;
    if (body.error) {
      rows.forEach(function (r) { r.className = ''; r.querySelector('.verdict').textContent = ''; });
      result.appendChild(el('p', 'filter: ' + body.error.text, 'error'));
      result.appendChild(caret(body.expression, body.error.offset));
      return;
    }
    if (!body.tracks) { result.appendChild(el('p', 'HTTP ' + answer.status + ': ' + (body.message || ''), 'error')); return; }
    body.tracks.forEach(function (t) {
      var r = section.querySelector('table.tracks tr[data-track="' + t.index + '"]');
      if (!r) return;
      r.className = t.keep ? 'keep' : 'drop';
      r.querySelector('.verdict').textContent = t.keep ? 'keep' : 'drop';
    });
    var summary = el('p');
    summary.appendChild(document.createTextNode(body.kept + ' of ' + body.total + ' tracks kept; canonical form '));
    summary.appendChild(el('code', body.canonical || '(none: every track)'));
    result.appendChild(summary);
    if (body.kept === 0) result.appendChild(el('p', 'no track kept: a request with this filter gets 400', 'error'));
    else result.appendChild(playLinks(JSON.parse(form.dataset.urls), body.expression));
  }
  document.querySelectorAll('form.filter').forEach(function (form) {
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      var expression = form.elements.expression.value;
      var url = '/_filter?ism=' + encodeURIComponent(form.dataset.ism) + '&expression=' + encodeURIComponent(expression);
      fetch(url)
        .then(function (r) {
          return r.text().then(function (text) {
            var body;
            try { body = JSON.parse(text); } catch (x) { body = { message: text }; }
            return { status: r.status, body: body };
          });
        })
        .then(function (answer) { show(form, answer); })
        .catch(function (x) { show(form, { status: 0, body: { message: x.message } }); });
    });
  });
})();
`;
