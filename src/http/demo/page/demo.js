/* global document, window, navigator, fetch, setInterval, clearInterval, AbortController, CSS, Worker, localStorage */
/*
 * The reference login page: drives FeLogin, FeVerifyOtp, FeRegister, FeAddPhone and
 * FeUpdateProfile (and the `login` primitive for the password step) through every next_step
 * of docs/contract.md, with the typed client (client/, served under /demo/client/). No session:
 * the client's journey helper keeps what the next request needs (flow, uid, the proofs each
 * answer hands out) and sends it in the fields docs/flows-http.md names; this page keeps only
 * what it shows. Codes come only from what the user types, or from the SMS itself where the
 * browser reads it (WebOTP). Error texts are the API's, shown as given. A request answered
 * `challenge_required` shows ALTCHA's widget with the challenge and goes again once it is solved.
 * With passkeys on (setup.json), @simplewebauthn/browser (served under /demo/simplewebauthn/)
 * runs the ceremonies: the browser's autofill from the identifier field, "Usa la passkey" on a
 * browser that made one (the cookie lfa_pk, which names nobody), and the offer after a code login;
 * at 90 "Le tue passkey" lists, renames and deletes the account's with the login's proof.
 */

import './altcha/altcha.js';
import './altcha/it.js';
import { challengeOf, ClientError, createClient, createJourney, signalUnknownCredential } from './client/index.js';
import * as webauthn from './simplewebauthn/index.js';

// ALTCHA's CSP-strict build makes no worker of its own: its SHA-256 worker is a file served beside it.
globalThis.$altcha.algorithms.set('SHA-256', () => new Worker('/demo/altcha/sha.js'));

/** FeAddPhone accepts only these flows: after another one the page does not offer it. */
const ADD_PHONE_FLOWS = ['email_add_phone', 'email_register_phone'];
const UNREACHABLE = 'Servizio non raggiungibile: riprova tra poco.';

const $ = (selector) => document.querySelector(selector);

let setup = {
  sandbox: false,
  outbox: null,
  sandboxPassword: null,
  passkeys: false,
  passkeyRpId: null,
  diagram: { screens: [], actions: [], journeys: [], start: {} },
};
// Answers (errors, issue texts, the code's message) are asked in the page's own language, whatever the browser's: one language on the page.
const client = createClient({ headers: { 'Accept-Language': document.documentElement.lang || 'it' } });
/** The API's side of the journey: flow, uid, identifiers and proofs, carried from answer to answer. */
const api = createJourney(client, { webauthn });
let journey = freshJourney();
let countdown = null;
/** Aborts the pending WebOTP read when the code view closes. */
let otpReader = null;

/** What the page shows: its view, the step shown, the screens visited. */
function freshJourney() {
  return {
    view: 'identifier',
    step: null,
    state: null,
    /** The phone a code was verified for in this journey (14, 25 or 62). */
    verifiedPhone: null,
    profileSaved: false,
    /** This journey logged in by passkey: no enrolment offer. */
    byPasskey: false,
    /** The enrolment offer was shown in this journey: once is enough. */
    offered: false,
    /** The id of the passkey this browser made in this journey: the one passkey the page knows is here. */
    madePasskey: null,
    visited: [],
  };
}

// ---- talking to the API --------------------------------------------------------------------

/** One call of the client: its envelope, or a failure with the page's own text when none came back. */
async function reach(request) {
  try {
    return await request;
  } catch (err) {
    if (err instanceof ClientError) return { success: false, error: UNREACHABLE, data: { reason: 'network' } };
    throw err;
  }
}

/** Gives the pending bot challenge up (the page restarted): its request answers as refused. */
let dropChallenge = null;

/**
 * A request that sends a code, which the API may answer `challenge_required` (docs/security.md,
 * "Bot challenge"): the challenge is shown in ALTCHA's widget, the person ticks it (Space on its
 * checkbox, focused), the browser does the work, and the request goes again with the solution.
 * `send(challenge)` makes the request, with the solution when there is one.
 */
async function withChallenge(send) {
  const envelope = await reach(send(undefined));
  const challenge = challengeOf(envelope);
  // The hosted widgets (Turnstile, hCaptcha) load from their providers: not on this page, whose CSP allows none.
  if (!challenge || challenge.provider !== 'pow') return envelope;
  const solution = await solveChallenge(challenge, envelope.error);
  return solution ? reach(send(solution)) : envelope;
}

function solveChallenge(challenge, text) {
  const widget = document.createElement('altcha-widget');
  widget.setAttribute(
    'challenge',
    JSON.stringify({ parameters: challenge.parameters, signature: challenge.signature }),
  );
  widget.setAttribute('auto', 'off');
  widget.setAttribute('language', 'it');
  return new Promise((resolve) => {
    const close = (payload) => {
      dropChallenge = null;
      $('#challenge').hidden = true;
      $('#challenge-widget').replaceChildren();
      resolve(payload);
    };
    dropChallenge = () => close(null);
    widget.addEventListener('load', () => widget.querySelector('input[type="checkbox"]')?.focus(), { once: true });
    widget.addEventListener('verified', (event) => close(event.detail.payload), { once: true });
    $('#challenge-text').textContent = text;
    $('#challenge-widget').replaceChildren(widget);
    $('#challenge').hidden = false;
  });
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
    const field =
      form && typeof issue.path === 'string' ? form.querySelector(`[name="${CSS.escape(issue.path)}"]`) : null;
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

/** Puts the panel at a step: its number, its screen, the journeys it belongs to. */
function reachStep(step, state = null) {
  journey.step = step;
  journey.state = state ?? (step !== null ? stateForStep(step) : null);
  if (journey.state && journey.visited[journey.visited.length - 1] !== journey.state)
    journey.visited.push(journey.state);
  $('#step-number').textContent = step === null ? '–' : String(step);
  $('#step-state').textContent = journey.state ? (screenOf(journey.state)?.name ?? journey.state) : '–';
  highlight(journey.state);
}

/** Shows one view, says which step and screen it is, and moves focus to its first field. */
function show(view, { step = null, state = null } = {}) {
  journey.view = view;
  for (const el of document.querySelectorAll('.view')) el.hidden = el.dataset.view !== view;
  if (view !== 'code') {
    stopCountdown();
    stopSmsRead();
  }
  // One WebAuthn request at a time, and none pending behind another view (WebOTP asks navigator.credentials too).
  if (view !== 'identifier') stopAutofill();
  $('#restart').hidden = view === 'identifier';
  reachStep(step, state);
  focusFirst(document.querySelector(`.view[data-view="${view}"]`));
}

function focusFirst(container) {
  const target = [...container.querySelectorAll('input, select, textarea, button')].find(
    (el) => !el.disabled && !el.readOnly && el.offsetParent !== null,
  );
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
 * The journeys the person chose: those that take every step seen since the start; once the path
 * leaves every journey (a phone added after «Registrati con l'email»), those that followed it
 * furthest from the start, so the label stays the journey chosen, not the one whose last arrow
 * matches; with no start in common, those that show the current screen.
 */
function possibleJourneys() {
  const seen = journey.visited;
  if (seen.length === 0) return [];
  const takes = (j, from, to) =>
    setup.diagram.actions.some((a) => a.from === from && a.to === to && a.journeys.includes(j.id));
  const all = setup.diagram.journeys;
  /** How many of the screens seen the journey follows from the start (0: it does not start there). */
  const followed = (j) => {
    if (!j.screens.includes(seen[0])) return 0;
    let n = 1;
    while (n < seen.length && takes(j, seen[n - 1], seen[n])) n++;
    return n;
  };
  const furthest = Math.max(...all.map(followed));
  if (furthest > 0) return all.filter((j) => followed(j) === furthest);
  return all.filter((j) => j.screens.includes(seen[seen.length - 1]));
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
  for (const item of $('#journeys').children)
    item.classList.toggle(
      'possible',
      possible.some((j) => j.id === item.dataset.journey),
    );
  $('#journey-current').textContent =
    possible.length === 1
      ? `Percorso: ${possible[0].title}`
      : possible.length > 1
        ? `Percorsi possibili: ${possible.map((j) => j.title).join(' · ')}`
        : '';
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
/** Moves to the step an accepted answer names. */
function advance(data) {
  const step = data.next_step;
  const { phone, email } = api.state;
  switch (String(step)) {
    case '14':
    case '62':
      return showCode(step, 'sms', phone, data.otp);
    case '33':
    case '23':
      return showCode(step, 'email', email, data.otp);
    case '65':
      // The account's email was never confirmed: the code went to the phone on file, which the user did not type.
      return showCode(step, 'sms', data.phone_hint, data.otp);
    case '60':
      return showPassword(step);
    case '24':
      $('#register-email-intro').textContent =
        `Il numero ${phone} è verificato ma nessun account lo usa: inserisci un'email per registrarti.`;
      return show('register-email', { step });
    case '25':
    case '37':
      if (String(step) === '25') journey.verifiedPhone = phone;
      $('#register-verified').textContent =
        `Email verificata: ${email}${String(step) === '25' ? `; telefono verificato: ${phone}` : ''}.`;
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
  // A phone's code may have gone by WhatsApp (sms.channels): the answer names the channel, and a fallback to SMS.
  const whatsapp = channel === 'sms' && otp && otp.notified && otp.notified.channel === 'whatsapp';
  const by = whatsapp ? 'su WhatsApp' : 'per SMS';
  $('#code-title').textContent =
    channel === 'sms' ? `Inserisci il codice ricevuto ${by}` : 'Inserisci il codice ricevuto per email';
  const onFile = String(step) === '65';
  const fellBack = channel === 'sms' && otp && otp.fallback === 'sms' ? 'Su WhatsApp non ti abbiamo raggiunto: ' : '';
  $('#code-sent').textContent = onFile
    ? `Il tuo account ha il numero ${destination}: abbiamo inviato lì un codice ${by}. Se il numero non è tuo, scegli «Non è il mio numero» e aggiungi il tuo.`
    : whatsapp
      ? `Ti abbiamo scritto su WhatsApp al numero ${destination}.`
      : `${fellBack}${fellBack ? 'abbiamo' : 'Abbiamo'} inviato un codice ${channel === 'sms' ? 'per SMS al numero' : "all'indirizzo"} ${destination}.`;
  // At 65 the code went out with the email proof: no resend, but the user may say the phone is not theirs.
  $('#resend').hidden = onFile;
  $('#decline-phone').hidden = !onFile;
  show('code', { step });
  startCountdown(otp && Number.isInteger(otp.retry_after) ? otp.retry_after : 0);
  if (channel === 'sms' && !whatsapp) readSmsCode(form);
}

/*
 * One-tap codes: where the browser has the WebOTP API, it offers the code of the SMS that ends
 * with the line `@<this domain> #<code>` (sms.webotp_domain); taken, it fills the field and
 * submits. Typing the code works the same; leaving the view aborts the read.
 */
function readSmsCode(form) {
  stopSmsRead();
  if (!('OTPCredential' in window) || !navigator.credentials) return;
  const reader = new AbortController();
  otpReader = reader;
  navigator.credentials
    .get({ otp: { transport: ['sms'] }, signal: reader.signal })
    .then((credential) => {
      if (otpReader !== reader || !credential || !credential.code || journey.view !== 'code') return;
      $('#otp-code').value = credential.code;
      form.requestSubmit();
    })
    .catch(() => {
      // Aborted, declined by the user, or no SMS came: the field is there to type the code.
    });
}

function stopSmsRead() {
  if (otpReader !== null) otpReader.abort();
  otpReader = null;
}

function showPassword(step) {
  $('#password-email').value = api.state.email;
  const hint = $('#password-hint');
  hint.hidden = !setup.sandboxPassword;
  hint.textContent = setup.sandboxPassword
    ? `Sandbox: gli utenti di prova hanno la password ${setup.sandboxPassword}.`
    : '';
  show('password', { step });
}

function showSuccess(data, { passwordLogin = false } = {}) {
  if (journey.view === 'profile') journey.profileSaved = true;
  // FeAddPhone and FeUpdateProfile resume at 90 with its `proof`; the password login's proof resumes neither.
  const canAct = !passwordLogin && !journey.profileSaved && Boolean(api.state.proofs.proof);
  const canAddPhone = canAct && !journey.verifiedPhone && ADD_PHONE_FLOWS.includes(api.state.flow);
  let detail = 'Puoi completare il profilo.';
  if (passwordLogin) detail = "Accesso con password completato dall'azione login.";
  else if (journey.profileSaved) detail = 'Il profilo è salvato e l’accesso è completo.';
  else if (canAddPhone) detail = 'Puoi aggiungere un telefono e completare il profilo.';
  $('#success-title').textContent = journey.profileSaved ? 'Profilo salvato' : 'Accesso effettuato';
  $('#success-detail').textContent = detail;
  $('#success-uid').textContent = api.state.uid ?? '–';
  $('#success-flow').textContent = api.state.flow ?? '–';
  $('#success-token').textContent = data.access_token ? 'emesso (cookie __utp impostato)' : 'non emesso';
  const offer = !journey.offered && canAct && !journey.byPasskey && mayOfferPasskey();
  if (offer) journey.offered = true;
  $('#passkey-offer').hidden = !offer;
  if (journey.byPasskey) detail = `Accesso con la passkey, senza codice. ${detail}`;
  $('#success-detail').textContent = detail;
  $('#go-add-phone').hidden = !canAddPhone;
  $('#go-profile').hidden = !canAct;
  $('#go-profile').classList.toggle('secondary', canAddPhone);
  // The login's proof lists the passkeys; the password step's names no verified login, a saved profile's is spent.
  const manage = setup.passkeys && canAct;
  $('#passkeys').hidden = !manage;
  if (manage) {
    managing.passkeys = [];
    managing.loaded = false;
    $('#passkeys-loading').hidden = false;
    $('#passkeys-empty').hidden = true;
    $('#passkeys-create').hidden = true;
    $('#passkeys-list').replaceChildren();
    void loadPasskeys();
  }
  // The password step ends the machine at 60 (askingPassword is final); the `login` action did the rest.
  if (passwordLogin) show('success', { step: journey.step, state: journey.state });
  else show('success', { step: 90 });
}

// ---- passkeys ----------------------------------------------------------------------------------

/*
 * lfa_pk=1: this browser made a passkey here. It names no person and no account (the service
 * never tells from an identifier whether one has passkeys); it only puts "Usa la passkey" first.
 * Set by the page when an enrolment or a passkey login succeeds, dropped when the service says
 * the passkey is unknown. A decline is kept in localStorage with its expiry.
 */
const PASSKEY_COOKIE = 'lfa_pk';
const PASSKEY_COOKIE_SECONDS = 400 * 24 * 3600; // the longest a browser keeps a cookie
const DECLINED_KEY = 'lfa_pk_declined_until';
const DECLINE_DAYS = 30;
const PASSKEY_UNKNOWN =
  'Questa passkey non è più valida: è stata eliminata o revocata. Accedi con un codice: inserisci la tua email o il tuo numero.';

const hasPasskeyCookie = () => document.cookie.split('; ').includes(`${PASSKEY_COOKIE}=1`);

function setPasskeyCookie(on) {
  const secure = window.location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${PASSKEY_COOKIE}=${on ? '1' : ''}; Max-Age=${on ? PASSKEY_COOKIE_SECONDS : 0}; Path=/; SameSite=Lax${secure}`;
}

function declinedRecently() {
  try {
    return Number(localStorage.getItem(DECLINED_KEY)) > Date.now();
  } catch {
    return false; // storage off: the offer comes again, declined again with one key
  }
}

function rememberDecline() {
  try {
    localStorage.setItem(DECLINED_KEY, String(Date.now() + DECLINE_DAYS * 24 * 3600 * 1000));
  } catch {
    // storage off: nothing to keep
  }
}

/** Offered once after a code login: not on a browser that has one here, nor after a decline. */
const mayOfferPasskey = () =>
  setup.passkeys && webauthn.browserSupportsWebAuthn() && !hasPasskeyCookie() && !declinedRecently();

/** Each conditional request gets a number: an answer of one replaced or stopped is ignored. */
let autofillRun = 0;

/** The browser's autofill offers the passkeys it holds for this site from the identifier field. */
async function startAutofill() {
  stopAutofill();
  if (!setup.passkeys || !(await webauthn.browserSupportsWebAuthnAutofill())) return;
  const run = ++autofillRun;
  api.loginWithPasskey({ autofill: true }).then(
    (envelope) => {
      if (run === autofillRun && journey.view === 'identifier')
        void submitting($('#view-identifier'), () => passkeyAnswered(envelope, true));
    },
    () => {
      // Cancelled by another ceremony or by leaving the view, or nothing picked: the field is there to type.
    },
  );
}

function stopAutofill() {
  autofillRun++;
  webauthn.WebAuthnAbortService.cancelCeremony();
}

/** What PasskeyLogin answered, by autofill or by the button. */
async function passkeyAnswered(envelope, fromAutofill) {
  if (envelope.success) {
    setPasskeyCookie(true);
    journey = { ...freshJourney(), byPasskey: true, visited: journey.visited };
    return advance(envelope.data);
  }
  if (envelope.data && envelope.data.reason === 'passkey_unknown') {
    // The client has told the browser (signalUnknownCredential) where it can; the page says it in
    // words, and does not ask the autofill again on this visit: a browser without the signal
    // would offer the same passkey.
    setPasskeyCookie(false);
    showCodePath();
    $('#error').textContent = PASSKEY_UNKNOWN;
    return;
  }
  showFailure(envelope);
  // A challenge is good once: the autofill starts again with a new one.
  if (fromAutofill || journey.view === 'identifier') void startAutofill();
}

async function onUsePasskey() {
  stopAutofill();
  try {
    await passkeyAnswered(await reach(api.loginWithPasskey()), false);
  } catch (err) {
    $('#error').textContent =
      err && err.name === 'NotAllowedError'
        ? 'Nessuna passkey usata. Puoi riprovare o farti inviare un codice.'
        : `La passkey non ha funzionato (${err && err.message}). Puoi farti inviare un codice.`;
    void startAutofill();
  }
}

/** The usual path: the identifier field, where the autofill still offers the passkey. */
function showCodePath() {
  $('#passkey-offered').hidden = true;
  $('#code-path').hidden = false;
  $('#identifier').focus();
}

/** `fromList`: "Crea una passkey" of the list's empty state, where focus goes back to the list. */
async function onAcceptPasskey(fromList = false) {
  try {
    const envelope = await reach(api.enrolPasskey());
    if (!envelope.success) return showFailure(envelope);
    setPasskeyCookie(true);
    journey.madePasskey = envelope.data.passkey.id;
    // The two requests of the enrolment passed the machine's steps for it (102 offered, 103 kept):
    // the panel follows them while the person stays on the success view, with their passkeys.
    reachStep(102);
    reachStep(103);
    $('#passkey-offer').hidden = true;
    say('Passkey creata: la prossima volta accedi senza codice.');
    if (!fromList) $('#success-title').focus();
    await loadPasskeys(fromList ? {} : null);
  } catch (err) {
    $('#error').textContent =
      err && err.name === 'NotAllowedError'
        ? 'Passkey non creata: il dispositivo non l’ha confermata. Puoi riprovare o continuare senza.'
        : `Passkey non creata (${err && err.message}). Puoi continuare senza.`;
  }
}

function onDeclinePasskey() {
  clearMessages();
  rememberDecline();
  $('#passkey-offer').hidden = true;
  // The offer gone, an empty list offers the passkey itself (a later change of mind).
  if (managing.loaded) renderPasskeys();
  say(`Va bene: su questo browser non te lo chiederemo per ${DECLINE_DAYS} giorni.`);
  $('#success-title').focus();
}

// ---- managing passkeys at 90 -------------------------------------------------------------------
/*
 * "Le tue passkey": PasskeyList with the proof the login answered at 90 (not spent by listing,
 * renaming or deleting: FeAddPhone and FeUpdateProfile still take it), oldest first. One passkey
 * at a time is being renamed or asked about; the list is drawn again from `managing` and reloaded
 * from the service after every change, so it shows what the service keeps.
 */
const managing = { passkeys: [], loaded: false, editing: null, confirming: null, reads: 0 };

const DAY_MS = 24 * 3600 * 1000;
const timeOf = new Intl.DateTimeFormat('it-IT', { hour: '2-digit', minute: '2-digit' });
const dateOf = new Intl.DateTimeFormat('it-IT', { day: 'numeric', month: 'long', year: 'numeric' });

/** A moment as a person says it: "oggi alle 10:42", "ieri alle 18:05", "il 3 novembre 2026". */
function spoken(iso) {
  const at = new Date(iso);
  const startOfToday = new Date();
  startOfToday.setHours(0, 0, 0, 0);
  if (at >= startOfToday) return `oggi alle ${timeOf.format(at)}`;
  if (at >= new Date(startOfToday.getTime() - DAY_MS)) return `ieri alle ${timeOf.format(at)}`;
  return `il ${dateOf.format(at)}`;
}

function describePasskey(passkey) {
  const created = `Creata ${spoken(passkey.created_at)}`;
  const used = passkey.last_used_at ? `usata l'ultima volta ${spoken(passkey.last_used_at)}` : 'mai usata per accedere';
  const where = passkey.backed_up ? 'sincronizzata tra i tuoi dispositivi' : 'solo sul dispositivo che l’ha creata';
  return `${created}, ${used}; ${where}.`;
}

const loginProof = () => api.state.proofs.proof;

/** Reads the account's passkeys again and draws them; `focus` says where focus goes after. */
async function loadPasskeys(focus = null) {
  const proof = loginProof();
  if (!proof || $('#passkeys').hidden) return;
  // The list read at 90 may still be on its way when an enrolment reads it again: the last read asked wins.
  const read = ++managing.reads;
  $('#passkeys').setAttribute('aria-busy', 'true');
  const envelope = await reach(client.PasskeyList({ proof }));
  if (read !== managing.reads) return;
  $('#passkeys').removeAttribute('aria-busy');
  $('#passkeys-loading').hidden = true;
  if (!envelope.success) {
    showFailure(envelope);
    return;
  }
  managing.passkeys = envelope.data.passkeys;
  managing.loaded = true;
  managing.editing = null;
  managing.confirming = null;
  renderPasskeys();
  placeFocus(focus);
}

/** Focus after a change: the passkey named (its first button), else the list's heading. */
function placeFocus(focus) {
  if (focus === null) return;
  const item = focus.id ? passkeyItem(focus.id) : null;
  const target = item ? item.querySelector(focus.selector ?? 'button') : null;
  (target ?? $('#passkeys-title')).focus();
}

const passkeyItem = (id) => [...$('#passkeys-list').children].find((item) => item.dataset.id === id) ?? null;

function button(text, { label, secondary = false, onClick }) {
  const el = document.createElement('button');
  el.type = 'button';
  el.textContent = text;
  if (label) el.setAttribute('aria-label', label);
  if (secondary) el.className = 'secondary';
  el.addEventListener('click', onClick);
  return el;
}

function renderPasskeys() {
  const { passkeys } = managing;
  $('#passkeys-empty').hidden = passkeys.length > 0;
  // No passkey and no offer on screen (declined, or made and deleted): the section offers one itself.
  $('#passkeys-create').hidden =
    passkeys.length > 0 || !$('#passkey-offer').hidden || !webauthn.browserSupportsWebAuthn();
  $('#passkeys-list').replaceChildren(...passkeys.map(renderPasskey));
}

function renderPasskey(passkey, index) {
  const item = document.createElement('li');
  item.className = 'passkey';
  item.dataset.id = passkey.id;
  const nameId = `passkey-name-${index}`;
  const name = document.createElement('p');
  name.className = 'passkey-name';
  name.id = nameId;
  name.textContent = passkey.name;
  const facts = document.createElement('p');
  facts.className = 'passkey-facts';
  facts.textContent = describePasskey(passkey);
  item.append(name, facts);

  if (managing.editing === passkey.id) item.append(renameForm(passkey, index));
  else if (managing.confirming === passkey.id) item.append(deleteConfirmation(passkey, index));
  else {
    const actions = document.createElement('div');
    actions.className = 'actions';
    actions.append(
      button('Rinomina', {
        label: `Rinomina la passkey «${passkey.name}»`,
        onClick: () => openRename(passkey.id),
      }),
      button('Elimina', {
        label: `Elimina la passkey «${passkey.name}»`,
        secondary: true,
        onClick: () => askDelete(passkey.id),
      }),
    );
    item.append(actions);
  }
  return item;
}

function renameForm(passkey, index) {
  const form = document.createElement('form');
  form.className = 'passkey-rename';
  const field = document.createElement('div');
  field.className = 'field';
  const label = document.createElement('label');
  const input = document.createElement('input');
  input.id = `passkey-rename-${index}`;
  // The field the API's issues name (`name`): a refusal marks it.
  input.name = 'name';
  input.required = true;
  input.maxLength = 64;
  input.autocomplete = 'off';
  input.value = passkey.name;
  label.htmlFor = input.id;
  label.textContent = `Nuovo nome per «${passkey.name}»`;
  field.append(label, input);
  const actions = document.createElement('div');
  actions.className = 'actions';
  const save = document.createElement('button');
  save.type = 'submit';
  save.textContent = 'Salva';
  actions.append(save, button('Annulla', { secondary: true, onClick: () => closeEditing(passkey.id) }));
  form.append(field, actions);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submitting(form, () => renamePasskey(passkey, input.value.trim()));
  });
  form.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeEditing(passkey.id);
  });
  return form;
}

function deleteConfirmation(passkey) {
  const box = document.createElement('div');
  box.className = 'passkey-confirm';
  box.setAttribute('role', 'group');
  const question = document.createElement('p');
  question.id = `passkey-confirm-${passkey.id}`;
  question.tabIndex = -1;
  question.textContent = `Eliminare la passkey «${passkey.name}»? Non potrai più accedere con questa passkey: ti servirà un codice, o un'altra passkey.`;
  box.setAttribute('aria-labelledby', question.id);
  const actions = document.createElement('div');
  actions.className = 'actions';
  actions.append(
    button('Sì, elimina', { onClick: () => void submitting(box, () => deletePasskey(passkey)) }),
    button('Annulla', { secondary: true, onClick: () => closeEditing(passkey.id) }),
  );
  box.append(question, actions);
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeEditing(passkey.id);
  });
  return box;
}

function openRename(id) {
  clearMessages();
  managing.editing = id;
  managing.confirming = null;
  renderPasskeys();
  const input = passkeyItem(id)?.querySelector('input');
  input?.focus();
  input?.select();
}

function askDelete(id) {
  clearMessages();
  managing.confirming = id;
  managing.editing = null;
  renderPasskeys();
  passkeyItem(id)?.querySelector('.passkey-confirm p')?.focus();
}

/** Annulla (or Escape): nothing changed, focus back on the passkey's first button. */
function closeEditing(id) {
  clearMessages();
  managing.editing = null;
  managing.confirming = null;
  renderPasskeys();
  placeFocus({ id });
}

async function renamePasskey(passkey, name) {
  const envelope = await reach(client.PasskeyRename({ proof: loginProof(), id: passkey.id, name }));
  if (!envelope.success) {
    showFailure(envelope);
    // Deleted meanwhile (another tab, another device): the list says what is left.
    if (envelope.data && envelope.data.reason === 'passkey_unknown') await loadPasskeys({});
    return;
  }
  await loadPasskeys({ id: passkey.id });
  say(`Passkey rinominata: ora si chiama «${envelope.data.passkey.name}».`);
}

async function deletePasskey(passkey) {
  const position = managing.passkeys.findIndex((p) => p.id === passkey.id);
  const envelope = await reach(client.PasskeyDelete({ proof: loginProof(), id: passkey.id }));
  // passkey_unknown: already gone (deleted elsewhere), which is what was asked.
  if (!envelope.success && !(envelope.data && envelope.data.reason === 'passkey_unknown')) return showFailure(envelope);
  // The browser's password manager stops offering it now, not at its next use (where it can: a hint).
  await signalUnknownCredential(setup.passkeyRpId, passkey.id);
  const next = managing.passkeys[position + 1] ?? managing.passkeys[position - 1];
  await loadPasskeys(next ? { id: next.id } : {});
  // lfa_pk puts "Usa la passkey" first; it names no passkey, so the page drops it when it knows
  // the one deleted is this browser's (made in this visit) or when the account has none left.
  if (journey.madePasskey === passkey.id || managing.passkeys.length === 0) setPasskeyCookie(false);
  if (journey.madePasskey === passkey.id) journey.madePasskey = null;
  say(
    managing.passkeys.length === 0
      ? `Passkey «${passkey.name}» eliminata. Non hai più passkey: accederai con un codice.`
      : `Passkey «${passkey.name}» eliminata.`,
  );
}

// ---- the forms -------------------------------------------------------------------------------

const value = (form, name) => {
  const field = form.elements.namedItem(name);
  return field ? field.value.trim() : '';
};

async function onIdentifier(form, submitter) {
  const identifier = value(form, 'identifier');
  const method = submitter && submitter.value === 'password' ? 'password' : undefined;
  const envelope = await withChallenge((challenge) =>
    api.login(method ? { identifier, method, challenge } : { identifier, challenge }),
  );
  if (!envelope.success) return showFailure(envelope);
  journey = { ...freshJourney(), visited: journey.visited };
  advance(envelope.data);
}

async function onRegisterEmail(form) {
  // At 24 the journey helper sends the verified phone and its phone_proof with it (phone-first registration).
  const envelope = await withChallenge((challenge) =>
    api.register({ phase: 'email_otp', email: value(form, 'email'), otp: true, challenge }),
  );
  if (!envelope.success) return showFailure(envelope);
  advance(envelope.data);
}

async function onCode(form) {
  const step = String(journey.step);
  // The journey helper adds the flow, the identifier the code went to, and the step's proof.
  const envelope = await reach(api.verifyOtp({ otp_code: value(form, 'otp_code') }));
  if (!envelope.success) return showFailure(envelope);
  if (step === '14' || step === '62') journey.verifiedPhone = api.state.phone;
  if (step === '65') journey.verifiedPhone = api.state.phoneHint;
  advance(envelope.data);
}

async function onDeclinePhone() {
  const envelope = await reach(api.declinePhone());
  if (!envelope.success) return showFailure(envelope);
  advance(envelope.data);
}

async function onResend() {
  // The request that sent the current code, repeated.
  const envelope = await withChallenge((challenge) => api.resend(challenge));
  if (!envelope.success) return showFailure(envelope);
  startCountdown(
    envelope.data.otp && Number.isInteger(envelope.data.otp.retry_after) ? envelope.data.otp.retry_after : 0,
  );
  say('Nuovo codice inviato.');
  $('#otp-code').focus();
}

async function onPassword(form) {
  const password = form.elements.namedItem('password').value;
  const envelope = await withChallenge((challenge) => api.password(password, challenge));
  if (!envelope.success) return showFailure(envelope);
  form.reset();
  showSuccess(envelope.data, { passwordLogin: true });
}

async function onRegisterForm(form) {
  // The journey helper adds the email, the phone verified at 25, the flow and the register_proof.
  const body = {
    phase: 'register',
    first_name: value(form, 'first_name'),
    last_name: value(form, 'last_name'),
    birth_date: value(form, 'birth_date'),
    city: value(form, 'city'),
    consents: {
      terms_conditions: form.elements.namedItem('terms_conditions').checked,
      marketing: form.elements.namedItem('marketing').checked,
    },
  };
  const envelope = await reach(api.register(body));
  if (!envelope.success) return showFailure(envelope);
  advance(envelope.data);
}

async function onAddPhone(form) {
  // The journey helper adds the uid, the email, the flow when FeAddPhone takes it, and the proof.
  const envelope = await withChallenge((challenge) => api.addPhone({ phone: value(form, 'phone'), challenge }));
  if (!envelope.success) return showFailure(envelope);
  advance(envelope.data);
}

async function onProfile(form) {
  // The journey helper adds the uid and the proof of 90.
  const body = {
    first_name: value(form, 'first_name'),
    last_name: value(form, 'last_name'),
    birth_date: value(form, 'birth_date'),
    city: value(form, 'city'),
    otp_phone: value(form, 'otp_phone'),
  };
  const envelope = await reach(api.updateProfile(body));
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
    api.reset();
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
  dropChallenge?.();
  stopCountdown();
  stopSmsRead();
  clearMessages();
  api.reset();
  journey = freshJourney();
  document.querySelectorAll('form.view').forEach((form) => form.reset());
  // A browser that made a passkey here is offered it first, the code one button away.
  const offered = setup.passkeys && hasPasskeyCookie();
  $('#passkey-offered').hidden = !offered;
  $('#code-path').hidden = offered;
  show('identifier', { state: setup.diagram.start.login });
  void startAutofill();
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
  $('#decline-phone').addEventListener('click', () => void submitting($('#view-code'), onDeclinePhone));
  for (const button of document.querySelectorAll('[data-go]'))
    button.addEventListener('click', () => go(button.dataset.go));
  $('#restart').addEventListener('click', restart);
  $('#use-passkey').addEventListener('click', () => void submitting($('#view-identifier'), onUsePasskey));
  $('#send-code').addEventListener('click', showCodePath);
  $('#passkey-accept').addEventListener('click', () => void submitting($('#passkey-offer'), onAcceptPasskey));
  $('#passkey-decline').addEventListener('click', onDeclinePasskey);
  $('#passkeys-create').addEventListener('click', () => void submitting($('#passkeys'), () => onAcceptPasskey(true)));
  restart();
  document.body.dataset.ready = 'true';
}

void start();
