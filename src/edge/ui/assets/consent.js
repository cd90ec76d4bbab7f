// The consent page: asks the server for the pending request (never rebuilding it from the
// URL), shows it, and posts the decision with the values the server gave (spec §4.4).
const $ = (id) => document.getElementById(id);

function say(text) {
  $('message').textContent = text;
  $('message').hidden = false;
}

async function show() {
  const query = new URLSearchParams(window.location.search);
  const ask = new URLSearchParams({
    client_id: query.get('client_id') ?? '',
    state: query.get('state') ?? '',
    scope: query.get('scope') ?? '',
  });
  const response = await fetch(`/oauth/consent/context?${ask}`, { credentials: 'same-origin' });
  if (response.status === 401) {
    window.location.assign('/login?next=authorize');
    return;
  }
  const context = await response.json();
  if (!response.ok) {
    say(context.error_description ?? 'This request cannot continue.');
    return;
  }
  const { client } = context;
  $('client-name').textContent = client.client_name;
  // Who is asking, so that two clients with one name never look the same.
  $('client-identity').textContent = client.verified
    ? `Set up by this server’s operator · client ID ${client.client_id}`
    : `Published at ${client.client_id_host} (not verified by Atelier) · ${client.client_id}`;
  for (const notice of context.notices) {
    const line = document.createElement('p');
    line.className = `notice ${notice.severity}`;
    line.dataset.kind = notice.kind;
    if (notice.severity === 'warning') line.setAttribute('role', 'alert');
    line.textContent = notice.message;
    $('notices').append(line);
  }
  $('redirect').textContent =
    `After you decide, your browser goes back to ${client.redirect_host}.`;
  for (const permission of context.permissions) {
    const item = document.createElement('li');
    item.textContent = permission.description;
    $('permissions').append(item);
  }
  const form = $('decision');
  form.action = context.form.action;
  form.method = context.form.method;
  form.elements.client_id.value = context.form.clientId;
  form.elements.state.value = context.form.state;
  $('csrf').name = context.form.csrfParameterName;
  $('csrf').value = context.form.csrfToken;
  $('approve').value = context.form.approveScope;
  offerLimit(context.spendingLimit);
  $('consent').hidden = false;
}

/** The optional spending limit: named as the server says, offered for the account's categories. */
function offerLimit({ fields, categories, periods }) {
  if (categories.length === 0) return;
  $('spend-credits').name = fields.credits;
  $('spend-category').name = fields.category;
  $('spend-period').name = fields.period;
  for (const category of categories) $('spend-category').append(new Option(category, category));
  for (const period of periods) $('spend-period').append(new Option(period, period));
  $('limit').hidden = false;
}

show().catch((error) => say(error.message));
