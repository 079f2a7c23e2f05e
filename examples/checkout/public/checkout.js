/* global document, Tessera */
// The checkout page's script: card fields from Tessera, the token to our own server. It never
// sees a card number or CVC: those stay inside Tessera's iframe.
(function () {
  var form = document.getElementById('checkout');
  var button = document.getElementById('pay');
  var outcome = document.getElementById('outcome');
  // Created first, mounted once the handlers are on: nothing the fields say is missed.
  var card = Tessera(document.body.dataset.publishableKey).cardFields({
    title: 'Card details',
    style: { base: { fontSize: '16px', color: '#1a1a1a' }, invalid: { color: '#b00020' } },
  });
  var complete = false;
  var paying = false;

  function show(text, kind) {
    outcome.textContent = text;
    outcome.className = kind;
  }

  card.on('ready', function () {
    button.disabled = false;
  });
  card.on('change', function (e) {
    complete = e.complete;
  });
  // The fields cannot work here (a key that does not allow this origin, a revoked key, Tessera unreachable):
  // say so instead of leaving an empty box.
  card.on('error', function (e) {
    button.disabled = true;
    show('Card payments are unavailable on this page (' + e.code + ').', 'error');
  });
  // Enter in a card field pays, as in any form.
  card.on('submit', function () {
    pay();
  });
  card.mount('#card');

  function pay() {
    if (paying) return;
    if (!complete) return show('Please complete your card details.', 'error');
    paying = true;
    button.disabled = true;
    show('Paying…', '');
    card
      .tokenize()
      .then(function (result) {
        return fetch('/pay', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token: result.token }),
        }).then(function (res) {
          return res.json();
        });
      })
      .then(
        function (answer) {
          if (answer.status === 'approved') show('Payment approved (' + answer.psp.chargeId + ').', 'approved');
          else if (answer.status === 'declined') show('Payment declined: ' + answer.psp.declineCode + '.', 'declined');
          else show('Payment failed: ' + answer.error + '.', 'error');
        },
        function (err) {
          // A TesseraError: the fields already show the card's problem next to the field; retryAfter is set when rate limited.
          var wait = err && err.retryAfter ? ' Try again in ' + err.retryAfter + ' s.' : '';
          show('Payment failed: ' + (err && err.code ? err.code : 'network error') + '.' + wait, 'error');
        },
      )
      .then(function () {
        paying = false;
        button.disabled = false;
      });
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    pay();
  });
})();
