/* global document, fetch, setInterval, clearInterval, CSS */
/*
 * The reference login page: drives FeLogin, FeVerifyOtp, FeRegister, FeAddPhone and
 * FeUpdateProfile (and the `login` primitive for the password step) through every next_step
 * of docs/contract.md. No session: everything the next request needs (flow, uid, the proofs each answer
 * hands out) is kept here and sent in the fields docs/flows-http.md names. Codes come only from
 * what the user types. Error texts are the API's, shown as given.
 */

const PROOF_FIELDS = ['phone_proof', 'pending_proof', 'register_proof', 'proof'];
/** FeAddPhone accepts only these flows; another one is left out of its request. */
const ADD_PHONE_FLOWS = ['email_add_phone', 'email_register_phone'];
const UNREACHABLE = 'Servizio non raggiungibile: riprova tra poco.';

const $ = (selector) => document.querySelector(selector);

let setup = { sandbox: false, outbox: null, sandboxPassword: null, diagram: { screens: [], actions: [], journeys: [], start: {} } };
let journey = freshJourney();
let countdown = null;

function freshJourney() {
  return {
    view: 'identifier',
    step: null,
    state: null,
    flow: null,
    email: null,
    phone: null,
    /** The phone a code was verified for in this journey (14, 25 or 62). */
    verifiedPhone: null,
    uid: null,
    proofs: {},
    /** The request that sent the code of the current code step: the resend button repeats it. */
    sender: null,
    profileSaved: false,
    visited: [],
  };
}

// ---- talking to the API --------------------------------------------------------------------

/** Drops absent fields: the API reads '' and null as absent too, this keeps requests readable. */
function compact(body) {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined && v !== null && v !== ''));
}

async function call(action, body) {
  let res;
  try {
    res = await fetch(`/?action=${encodeURIComponent(action)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify(compact(body)),
    });
  } catch {
    return { success: false, error: UNREACHABLE, data: { reason: 'network' } };
  }
  try {
    return await res.json();
  } catch {
    return { success: false, error: UNREACHABLE, data: { reason: 'network' } };
  }
}

/** Runs one request from a form: busy while it runs, the error region cleared first. */
async function submitting(container, work) {
  clearMessages();
  const buttons = [...container.querySelectorAll('button')];
  container.setAttribute('aria-busy', 'true');
  buttons.forEach((b) => (b.dataset.wasDisabled = String(b.disabled)));
  buttons.forEach((b) => (b.disabled = true));
  try {
    await work();
  } finally {
    container.removeAttribute('aria-busy');
    // The resend button keeps whatever its countdown decided meanwhile.
    buttons.forEach((b) => {
      if (b.id !== 'resend') b.disabled = b.dataset.wasDisabled === 'true';
    });
    if (countdown === null) $('#resend').disabled = false;
  }
}

// ---- messages --------------------------------------------------------------------------------

function clearMessages() {
  $('#error').textContent = '';
  $('#status').textContent = '';
  document.querySelectorAll('[aria-invalid="true"]').forEach((el) => el.removeAttribute('aria-invalid'));
}

/** A refusal: the API's `error` text exactly as given; the fields its `issues` name are marked. */
function showFailure(envelope) {
  $('#error').textContent = envelope.error || UNREACHABLE;
  const data = envelope.data || {};
  const form = document.querySelector('.view:not([hidden])');
  const issues = Array.isArray(data.issues) ? data.issues : [];
  let first = null;
  for (const issue of issues) {
    const field = form && typeof issue.path === 'string' ? form.querySelector(`[name="${CSS.escape(issue.path)}"]`) : null;
    if (field) {
      field.setAttribute('aria-invalid', 'true');
      first ??= field;
    }
  }
  if (data.reason === 'invalid' || data.reason === 'expired' || data.reason === 'too_many_attempts') {
    const code = $('#otp-code');
    code.setAttribute('aria-invalid', 'true');
    first = code;
  }
  if (data.reason === 'already_sent' && Number.isInteger(data.retry_after)) startCountdown(data.retry_after);
  if (first) {
    first.focus();
    if (typeof first.select === 'function') first.select();
  }
}

function say(text) {
  $('#status').textContent = text;
}

// ---- resend countdown ------------------------------------------------------------------------

function stopCountdown() {
  if (countdown !== null) clearInterval(countdown);
  countdown = null;
}

/** Disables the resend button for `seconds` (the answer's retry_after), showing what is left. */
function startCountdown(seconds) {
  stopCountdown();
  const button = $('#resend');
  const wait = $('#resend-wait');
  const deadline = Date.now() + seconds * 1000;
  const tick = () => {
    const left = Math.ceil((deadline - Date.now()) / 1000);
    if (left <= 0) {
      stopCountdown();
      wait.hidden = true;
      button.disabled = false;
      return;
    }
    $('#resend-seconds').textContent = String(left);
    wait.hidden = false;
    button.disabled = true;
  };
  tick();
  if (seconds > 0) countdown = setInterval(tick, 200);
}

// ---- views and the step panel ---------------------------------------------------------------
// The panel shows the screens of the journey diagrams (GET /flows), each once, in their Italian
// words, the journeys the screens seen so far belong to, and the actions from the current screen.

function stateForStep(step) {
  const found = setup.diagram.screens.find((s) => s.step === String(step));
  return found ? found.id : null;
}

/** Shows one view, says which step and screen it is, and moves focus to its first field. */
function show(view, { step = null, state = null } = {}) {
  journey.view = view;
  journey.step = step;
  journey.state = state ?? (step !== null ? stateForStep(step) : null);
  if (journey.state && journey.visited[journey.visited.length - 1] !== journey.state) journey.visited.push(journey.state);
  for (const el of document.querySelectorAll('.view')) el.hidden = el.dataset.view !== view;
  if (view !== 'code') stopCountdown();
  $('#step-number').textContent = step === null ? '–' : String(step);
  $('#step-state').textContent = journey.state ? screenOf(journey.state)?.name ?? journey.state : '–';
  $('#restart').hidden = view === 'identifier';
  highlight(journey.state);
  focusFirst(document.querySelector(`.view[data-view="${view}"]`));
}

function focusFirst(container) {
  const target = [...container.querySelectorAll('input, select, textarea, button')].find((el) => !el.disabled && !el.readOnly && el.offsetParent !== null);
  (target ?? container.querySelector('h2')).focus();
}

const screenOf = (id) => setup.diagram.screens.find((s) => s.id === id);
const titleOf = (id) => screenOf(id)?.title ?? id;

function renderDiagram() {
  $('#diagram').replaceChildren(
    ...setup.diagram.screens.map((screen) => {
      const item = document.createElement('li');
      item.className = 'state waits';
      item.dataset.state = screen.id;
      const badge = document.createElement('span');
      badge.className = 'badge';
      badge.textContent = screen.step ?? '';
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = screen.name;
      item.append(badge, name);
      item.title = screen.shows;
      return item;
    }),
  );
  $('#journeys').replaceChildren(
    ...setup.diagram.journeys.map((j) => {
      const item = document.createElement('li');
      item.dataset.journey = j.id;
      const link = document.createElement('a');
      link.href = `/flows#${encodeURIComponent(j.id)}`;
      link.textContent = j.title;
      item.append(link);
      return item;
    }),
  );
}

/**
 * The journeys the screens seen since the start follow: those that take every step between
 * them; failing that (a path that mixes journeys), those that take the last step; failing that,
 * those that show the current screen.
 */
function possibleJourneys() {
  const seen = journey.visited;
  const takes = (j, from, to) => setup.diagram.actions.some((a) => a.from === from && a.to === to && a.journeys.includes(j.id));
  const all = setup.diagram.journeys;
  const following = all.filter((j) => seen.length > 0 && j.screens.includes(seen[0]) && seen.slice(1).every((to, i) => takes(j, seen[i], to)));
  if (following.length || seen.length === 0) return following;
  const last = seen.length > 1 ? all.filter((j) => takes(j, seen[seen.length - 2], seen[seen.length - 1])) : [];
  return last.length ? last : all.filter((j) => j.screens.includes(seen[seen.length - 1]));
}

function highlight(stateId) {
  const actions = setup.diagram.actions.filter((a) => a.from === stateId);
  const next = new Set(actions.map((a) => a.to));
  let current = null;
  for (const item of $('#diagram').children) {
    const id = item.dataset.state;
    const isCurrent = id === stateId;
    item.classList.toggle('current', isCurrent);
    item.classList.toggle('visited', !isCurrent && journey.visited.includes(id));
    item.classList.toggle('next', !isCurrent && next.has(id));
    if (isCurrent) {
      item.setAttribute('aria-current', 'step');
      current = item;
    } else item.removeAttribute('aria-current');
  }
  const possible = possibleJourneys();
  for (const item of $('#journeys').children) item.classList.toggle('possible', possible.some((j) => j.id === item.dataset.journey));
  $('#journey-current').textContent =
    possible.length === 1 ? `Percorso: ${possible[0].title}` : possible.length > 1 ? `Percorsi possibili: ${possible.map((j) => j.title).join(' · ')}` : '';
  const screen = screenOf(stateId);
  $('#diagram-current').textContent = screen ? `Schermata attuale: ${screen.title}. Mostra ${screen.shows}.` : '';
  $('#transitions').replaceChildren(
    ...actions.map((a) => {
      const item = document.createElement('li');
      const label = document.createElement('strong');
      label.textContent = a.label;
      item.append(label, ` → ${titleOf(a.to)}`);
      if (a.notes.length) {
        const notes = document.createElement('span');
        notes.className = 'notes';
        notes.textContent = a.notes.join(' · ');
        item.append(notes);
      }
      return item;
    }),
  );
  if (current) {
    const scroller = $('#diagram-scroll');
    scroller.scrollTop = Math.max(0, current.offsetTop - scroller.offsetTop - scroller.clientHeight / 2);
  }
}

// ---- answers ---------------------------------------------------------------------------------

/** Keeps what the next requests need: every proof under the field name it was answered in, flow, uid. */
function remember(data) {
  for (const field of PROOF_FIELDS) if (typeof data[field] === 'string') journey.proofs[field] = data[field];
  if (data.flow) journey.flow = data.flow;
  if (data.uid) journey.uid = data.uid;
}

/** Moves to the step an accepted answer names. */
function advance(data) {
  remember(data);
  const step = data.next_step;
  switch (String(step)) {
    case '14':
    case '62':
      return showCode(step, 'sms', journey.phone, data.otp);
    case '33':
    case '23':
      return showCode(step, 'email', journey.email, data.otp);
    case '60':
      return showPassword(step);
    case '24':
      $('#register-email-intro').textContent = `Il numero ${journey.phone} è verificato ma nessun account lo usa: inserisci un'email per registrarti.`;
      return show('register-email', { step });
    case '25':
    case '37':
      if (String(step) === '25') journey.verifiedPhone = journey.phone;
      $('#register-verified').textContent = `Email verificata: ${journey.email}${String(step) === '25' ? `; telefono verificato: ${journey.phone}` : ''}.`;
      return show('register-form', { step });
    case '61':
      return show('add-phone', { step });
    case '90':
      return showSuccess(data);
    default:
      $('#error').textContent = `Passo ${step} non previsto da questa pagina.`;
  }
}

function showCode(step, channel, destination, otp) {
  const form = $('#view-code');
  form.reset();
  $('#code-title').textContent = channel === 'sms' ? 'Inserisci il codice ricevuto per SMS' : "Inserisci il codice ricevuto per email";
  $('#code-sent').textContent = `Abbiamo inviato un codice ${channel === 'sms' ? 'per SMS al numero' : "all'indirizzo"} ${destination}.`;
  show('code', { step });
  startCountdown(otp && Number.isInteger(otp.retry_after) ? otp.retry_after : 0);
}

function showPassword(step) {
  $('#password-email').value = journey.email;
  const hint = $('#password-hint');
  hint.hidden = !setup.sandboxPassword;
  hint.textContent = setup.sandboxPassword ? `Sandbox: gli utenti di prova hanno la password ${setup.sandboxPassword}.` : '';
  show('password', { step });
}

function showSuccess(data, { passwordLogin = false } = {}) {
  if (journey.view === 'profile') journey.profileSaved = true;
  // FeAddPhone and FeUpdateProfile resume at 90 with its `proof`; the password login's proof resumes neither.
  const canAct = !passwordLogin && !journey.profileSaved && Boolean(journey.proofs.proof);
  const canAddPhone = canAct && !journey.verifiedPhone && ADD_PHONE_FLOWS.includes(journey.flow);
  let detail = 'Puoi completare il profilo.';
  if (passwordLogin) detail = "Accesso con password completato dall'azione login.";
  else if (journey.profileSaved) detail = 'Il profilo è salvato e l’accesso è completo.';
  else if (canAddPhone) detail = 'Puoi aggiungere un telefono e completare il profilo.';
  $('#success-title').textContent = journey.profileSaved ? 'Profilo salvato' : 'Accesso effettuato';
  $('#success-detail').textContent = detail;
  $('#success-uid').textContent = journey.uid ?? '–';
  $('#success-flow').textContent = journey.flow ?? '–';
  $('#success-token').textContent = data.access_token ? 'emesso (cookie __utp impostato)' : 'non emesso';
  $('#go-add-phone').hidden = !canAddPhone;
  $('#go-profile').hidden = !canAct;
  $('#go-profile').classList.toggle('secondary', canAddPhone);
  // The password step ends the machine at 60 (askingPassword is final); the `login` action did the rest.
  if (passwordLogin) show('success', { step: journey.step, state: journey.state });
  else show('success', { step: 90 });
}

// ---- the forms -------------------------------------------------------------------------------

const value = (form, name) => {
  const field = form.elements.namedItem(name);
  return field ? field.value.trim() : '';
};

async function onIdentifier(form, submitter) {
  const identifier = value(form, 'identifier');
  const method = submitter && submitter.value === 'password' ? 'password' : undefined;
  const body = { identifier, method };
  const envelope = await call('FeLogin', body);
  if (!envelope.success) return showFailure(envelope);
  journey = { ...freshJourney(), visited: journey.visited };
  const step = String(envelope.data.next_step);
  if (step === '14') journey.phone = identifier;
  else journey.email = identifier;
  journey.sender = { action: 'FeLogin', body: { identifier } };
  advance(envelope.data);
}

async function onRegisterEmail(form) {
  const email = value(form, 'email');
  // At 24 the phone was verified: the phone_proof goes with it (phone-first registration).
  const phoneFirst = journey.step !== null && String(journey.step) === '24';
  const body = {
    phase: 'email_otp',
    email,
    otp: true,
    ...(phoneFirst ? { phone: journey.phone, flow: journey.flow, phone_proof: journey.proofs.phone_proof } : {}),
  };
  const envelope = await call('FeRegister', body);
  if (!envelope.success) return showFailure(envelope);
  journey.email = email;
  journey.sender = { action: 'FeRegister', body };
  advance(envelope.data);
}

async function onCode(form) {
  const step = String(journey.step);
  const body = {
    otp_code: value(form, 'otp_code'),
    flow: journey.flow,
    phone: step === '33' ? undefined : journey.phone,
    email: step === '14' ? undefined : journey.email,
    uid: step === '62' ? journey.uid : undefined,
    pending_proof: step === '23' || step === '62' ? journey.proofs.pending_proof : undefined,
  };
  const envelope = await call('FeVerifyOtp', body);
  if (!envelope.success) return showFailure(envelope);
  if (step === '14' || step === '62') journey.verifiedPhone = journey.phone;
  advance(envelope.data);
}

async function onResend() {
  if (!journey.sender) return;
  const envelope = await call(journey.sender.action, journey.sender.body);
  if (!envelope.success) return showFailure(envelope);
  remember(envelope.data);
  startCountdown(envelope.data.otp && Number.isInteger(envelope.data.otp.retry_after) ? envelope.data.otp.retry_after : 0);
  say('Nuovo codice inviato.');
  $('#otp-code').focus();
}

async function onPassword(form) {
  const envelope = await call('login', { email: journey.email, password: form.elements.namedItem('password').value });
  if (!envelope.success) return showFailure(envelope);
  form.reset();
  if (typeof envelope.data.proof === 'string') journey.proofs.proof = envelope.data.proof;
  showSuccess(envelope.data, { passwordLogin: true });
}

async function onRegisterForm(form) {
  const step = String(journey.step);
  const body = {
    phase: 'register',
    email: journey.email,
    phone: step === '25' ? journey.phone : undefined,
    flow: journey.flow,
    register_proof: journey.proofs.register_proof,
    first_name: value(form, 'first_name'),
    last_name: value(form, 'last_name'),
    birth_date: value(form, 'birth_date'),
    city: value(form, 'city'),
    consents: { terms_conditions: form.elements.namedItem('terms_conditions').checked, marketing: form.elements.namedItem('marketing').checked },
  };
  const envelope = await call('FeRegister', body);
  if (!envelope.success) return showFailure(envelope);
  advance(envelope.data);
}

async function onAddPhone(form) {
  const phone = value(form, 'phone');
  const body = {
    phone,
    uid: journey.uid,
    email: journey.email,
    flow: ADD_PHONE_FLOWS.includes(journey.flow) ? journey.flow : undefined,
    proof: journey.proofs.proof,
  };
  const envelope = await call('FeAddPhone', body);
  if (!envelope.success) return showFailure(envelope);
  journey.phone = phone;
  journey.sender = { action: 'FeAddPhone', body };
  advance(envelope.data);
}

async function onProfile(form) {
  const body = {
    uid: journey.uid,
    first_name: value(form, 'first_name'),
    last_name: value(form, 'last_name'),
    birth_date: value(form, 'birth_date'),
    city: value(form, 'city'),
    otp_phone: value(form, 'otp_phone'),
    proof: journey.proofs.proof,
  };
  const envelope = await call('FeUpdateProfile', body);
  if (!envelope.success) return showFailure(envelope);
  advance(envelope.data);
}

const HANDLERS = {
  identifier: onIdentifier,
  'register-email': onRegisterEmail,
  code: onCode,
  password: onPassword,
  'register-form': onRegisterForm,
  'add-phone': onAddPhone,
  profile: onProfile,
};

/** Buttons that open a view without a request: registration by email, add phone or profile at 90. */
function go(view) {
  clearMessages();
  if (view === 'register-email') {
    journey = freshJourney();
    $('#register-email-intro').textContent = "Ti invieremo un codice per confermare l'indirizzo.";
    $('#view-register-email').reset();
    return show('register-email', { state: setup.diagram.start.register });
  }
  if (view === 'profile') $('#profile-otp-phone').value = journey.verifiedPhone ?? '';
  if (view === 'add-phone') $('#view-add-phone').reset();
  // FeAddPhone and FeUpdateProfile resume at 90 with its proof.
  show(view, { step: 90 });
}

function restart() {
  stopCountdown();
  clearMessages();
  journey = freshJourney();
  document.querySelectorAll('form.view').forEach((form) => form.reset());
  show('identifier', { state: setup.diagram.start.login });
}

async function start() {
  const res = await fetch('/demo/setup.json', { headers: { accept: 'application/json' } });
  setup = await res.json();
  if (setup.outbox) {
    $('#outbox-link').href = setup.outbox;
    $('#outbox-link').textContent = setup.outbox;
    $('#sandbox-note').hidden = false;
  }
  renderDiagram();
  for (const form of document.querySelectorAll('form.view')) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const handler = HANDLERS[form.dataset.view];
      void submitting(form, () => handler(form, event.submitter));
    });
  }
  $('#resend').addEventListener('click', () => void submitting($('#view-code'), onResend));
  for (const button of document.querySelectorAll('[data-go]')) button.addEventListener('click', () => go(button.dataset.go));
  $('#restart').addEventListener('click', restart);
  restart();
  document.body.dataset.ready = 'true';
}

void start();
