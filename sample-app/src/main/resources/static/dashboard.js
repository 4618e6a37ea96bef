// Polls /actuator/llmquota and draws each pool's dimensions: the client's bucket (what is
// left of its capacity), what calls in flight reserved, when it is full again, and which
// dimension binds. Plain JavaScript: no build step.
(function () {
  'use strict';
  var polls = 0;
  var last = null;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function secondsUntil(iso) {
    if (!iso) { return null; }
    return Math.max(0, Math.ceil((Date.parse(iso) - Date.now()) / 1000));
  }

  function number(n) { return Number(n).toLocaleString('en-US'); }

  function dimensionRow(pool, key, dimension) {
    var row = el('div', 'dimension');
    row.setAttribute('data-dimension', key);
    if (key === pool.binding) { row.classList.add('binding'); }
    row.appendChild(el('span', 'name', key + (key === pool.binding ? '  (binds)' : '')));
    var bar = el('div', 'bar');
    var figures = el('span', 'figures');
    if (dimension.local) {
      var capacity = Math.max(1, dimension.local.capacity);
      var remaining = Math.max(0, dimension.local.remaining);
      var left = el('div', 'remaining');
      left.style.width = Math.min(100, 100 * remaining / capacity) + '%';
      bar.appendChild(left);
      var reserved = key.indexOf('tokens') >= 0 ? pool.inFlight.tokens : pool.inFlight.requests;
      if (key.indexOf('account:') !== 0 && key.indexOf('per-minute') >= 0 && reserved > 0) {
        var held = el('div', 'reserved');
        held.style.left = Math.min(100, 100 * remaining / capacity) + '%';
        held.style.width = Math.min(100, 100 * reserved / capacity) + '%';
        held.title = number(reserved) + ' reserved by calls in flight';
        bar.appendChild(held);
      }
      var reset = secondsUntil(dimension.reset);
      figures.textContent = number(dimension.local.remaining) + ' of ' + number(dimension.local.capacity)
        + ' left · limit ' + number(dimension.limit) + '/min'
        + (reset ? ' · full in ' + reset + ' s' : ' · full');
      figures.setAttribute('data-reset', dimension.reset || '');
    } else if (dimension.inUse !== undefined) {
      var inUse = el('div', 'remaining');
      inUse.style.width = Math.min(100, 100 * (dimension.enforced - dimension.inUse) / Math.max(1, dimension.enforced)) + '%';
      bar.appendChild(inUse);
      figures.textContent = dimension.inUse + ' of ' + dimension.enforced + ' in use';
    } else if (dimension.budget !== undefined) {
      var spent = el('div', 'remaining');
      spent.style.width = Math.min(100, 100 * dimension.left / Math.max(1e-9, dimension.budget)) + '%';
      bar.appendChild(spent);
      figures.textContent = dimension.spent.toFixed(2) + ' of ' + dimension.budget.toFixed(2) + ' spent';
    } else {
      figures.textContent = number(dimension.remaining) + ' of ' + number(dimension.limit) + ' left';
    }
    row.appendChild(bar);
    row.appendChild(figures);
    return row;
  }

  function draw(report) {
    var pools = document.getElementById('pools');
    pools.textContent = '';
    report.pools.forEach(function (pool) {
      var card = el('section', 'pool');
      card.setAttribute('data-pool', pool.provider + '/' + pool.model);
      var header = el('header');
      header.appendChild(el('h2', null, pool.provider + ' / ' + pool.model));
      header.appendChild(el('span', 'state ' + pool.state, pool.state));
      header.appendChild(el('span', 'muted', pool.binding ? 'binds: ' + pool.binding : 'no limit binds yet'));
      card.appendChild(header);
      Object.keys(pool.dimensions).forEach(function (key) {
        card.appendChild(dimensionRow(pool, key, pool.dimensions[key]));
      });
      var waiting = pool.priority ? pool.priority.interactive.waiting + pool.priority.batch.waiting : 0;
      card.appendChild(el('div', 'inflight', 'in flight: ' + pool.inFlight.requests + ' calls, '
        + number(pool.inFlight.tokens) + ' tokens reserved · waiting: ' + waiting));
      pools.appendChild(card);
    });
  }

  function batch(status) {
    var node = document.getElementById('batch');
    if (!status || status.documents === undefined) { return; }
    node.textContent = (status.governed ? 'Batch with llm-quota: ' : 'Batch without llm-quota: ')
      + status.done + ' of ' + status.documents + ' documents done, ' + status.failed + ' failed, '
      + status.refusals + ' provider refusals, ' + status.seconds + ' s'
      + (status.running ? ' (running)' : ' (finished)');
  }

  function poll() {
    fetch('actuator/llmquota', { headers: { Accept: 'application/json' } })
      .then(function (response) { return response.json(); })
      .then(function (report) {
        last = report;
        polls += 1;
        draw(report);
        var updated = document.getElementById('updated');
        updated.setAttribute('data-polls', String(polls));
        updated.textContent = 'Updated ' + new Date().toLocaleTimeString() + ' (every second).';
      })
      .catch(function (error) {
        document.getElementById('updated').textContent = 'Cannot read /actuator/llmquota: ' + error;
      });
    fetch('demo/status').then(function (response) { return response.json(); }).then(batch).catch(function () {});
  }

  poll();
  setInterval(poll, 1000);
  // resets count down between polls
  setInterval(function () { if (last) { draw(last); } }, 250);
}());
