/* global document, Tessera */
// The checkout page's script: card fields from Tessera, the token to our own server. It never
// sees a card number or CVC: those stay inside Tessera's iframe.
(function () {
  var form = document.getElementById('checkout');
  var button = document.getElementById('pay');
  var outcome = document.getElementById('outcome');
  var card = Tessera(document.body.dataset.publishableKey).cardFields({
    container: '#card',
    title: 'Card details',
    style: { base: { fontSize: '16px', color: '#1a1a1a' }, invalid: { color: '#b00020' } },
  });
  var complete = false;
  card.on('ready', function () {
    button.disabled = false;
  });
  card.on('change', function (e) {
    complete = e.complete;
  });

  function show(text, kind) {
    outcome.textContent = text;
    outcome.className = kind;
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    if (!complete) return show('Please complete your card details.', 'error');
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
          show('Payment failed: ' + (err && err.code ? err.code : 'network error') + '.', 'error');
        },
      )
      .then(function () {
        button.disabled = false;
      });
  });
})();
