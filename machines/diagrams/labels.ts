import type { UserEventType } from '../actions';
import type { JourneyId } from './journeys';
import type { FlowFailureReason, LoginFlowState } from '../login-flow.machine';

/*
 * The plain Italian words product and QA read, in one table: the journeys' titles, a name for
 * every state of the login machine (the screen the user sees where a request settles, a short
 * note of what the service does where a request passes), the user's action for every event,
 * and the mistake behind every refusal. The journey diagrams (machines/diagrams/journey-diagrams.ts,
 * docs/journeys.md, GET /flows) and the demo page's step panel read them from here; nothing
 * else spells them. The API's own error texts stay in the error catalogue: only the mistake is
 * named here.
 */

/** A state where a request settles: what the user sees. */
export interface ScreenLabel {
  /** The screen's name, as the diagrams print it after the step number (`14 · Inserisci il codice SMS`). */
  screen: string;
  /** What the frontend shows there, in a few words. */
  shows: string;
}

/** A state a request passes through: what the service does there (an upstream call, or a check). */
interface NoteLabel {
  note: string;
}

export type StateLabel = ScreenLabel | NoteLabel;

/** The user's action: one text per event, or one per state the event leads into where one event is several actions (`*`: any other). */
export type ActionLabel = string | Partial<Record<LoginFlowState | '*', string>>;

export const LABELS = {
  journeys: {
    'phone-login': 'Accesso con il telefono',
    'phone-registration': 'Registrazione con il telefono',
    'email-registration': "Registrazione con l'email, poi telefono e profilo",
    'email-login-with-phone': "Accesso con l'email, account con telefono",
    'email-login-unconfirmed-phone': "Accesso con l'email mai confermata, telefono confermato",
    'email-login-phone-declined': "Accesso con l'email mai confermata, «Non è il mio numero»",
    'email-login-add-phone': "Accesso con l'email e aggiunta del telefono",
    'email-signup': "Registrazione da «Registrati con l'email»",
    password: 'Accesso con password',
    'passkey-login': 'Accesso con la passkey',
    'passkey-enrol': 'Passkey creata dopo un accesso con il telefono',
  } satisfies Record<JourneyId, string>,

  states: {
    // The screens (tag `settled`).
    enteringIdentifier: {
      screen: 'Accedi o registrati',
      shows: "il campo email o telefono, «Accedi con password» e «Registrati con l'email»",
    },
    askingPassword: {
      screen: 'Inserisci la password',
      shows: "email e password: l'accesso lo completa l'azione login",
    },
    awaitingPhoneCode: {
      screen: 'Inserisci il codice SMS',
      shows: 'il campo per il codice ricevuto per SMS e «Invia un nuovo codice» dopo l’attesa',
    },
    awaitingEmailCode: {
      screen: 'Inserisci il codice email',
      shows: 'il campo per il codice ricevuto per email e «Invia un nuovo codice» dopo l’attesa',
    },
    enteringRegistrationEmail: { screen: "Registrati con l'email", shows: 'il campo email a cui inviare il codice' },
    askingRegistrationEmail: {
      screen: "Scegli l'email per registrarti",
      shows: 'il telefono è verificato ma nessun account lo usa: il campo email',
    },
    awaitingRegistrationEmailCode: {
      screen: "Inserisci il codice dell'email di registrazione",
      shows: "il campo per il codice ricevuto all'email appena scelta",
    },
    fillingPhoneRegistrationForm: {
      screen: 'Completa la registrazione',
      shows: 'nome, cognome, data di nascita, città e consensi; telefono ed email già verificati',
    },
    fillingEmailRegistrationForm: {
      screen: 'Completa la registrazione',
      shows: 'nome, cognome, data di nascita, città e consensi; email già verificata',
    },
    awaitingPhoneOnFileCode: {
      screen: 'Conferma il telefono dell’account',
      shows:
        'l’email non era mai stata confermata: il campo per il codice inviato per SMS al telefono dell’account (numero mascherato) e «Non è il mio numero»',
    },
    askingPhone: {
      screen: 'Aggiungi il telefono',
      shows: "l'account non ha un telefono: il campo per aggiungerne uno",
    },
    awaitingNewPhoneCode: {
      screen: 'Inserisci il codice SMS del nuovo telefono',
      shows: 'il campo per il codice ricevuto per SMS al nuovo numero',
    },
    loggedIn: {
      screen: 'Accesso effettuato',
      shows: "conferma dell'accesso, cookie __utp; «Aggiungi un telefono», «Completa il profilo»",
    },
    passkeyOffered: {
      screen: 'Crea la passkey',
      shows: 'il browser chiede di creare la passkey (impronta, volto o PIN del dispositivo)',
    },
    passkeyEnrolled: {
      screen: 'Passkey creata',
      shows: "conferma della passkey salvata; l'accesso resta quello di 90",
    },
    refused: { screen: 'Richiesta rifiutata', shows: "il testo d'errore della risposta; l'utente resta sul passo" },
    // What the service does between two screens.
    sendingSmsCode: { note: 'invia SMS' },
    verifyingPhoneCode: { note: 'verifica il codice SMS' },
    findingUserByPhone: { note: "cerca l'utente per telefono" },
    sendingEmailCode: { note: "invia l'email con il codice" },
    verifyingEmailCode: { note: 'verifica il codice email' },
    lookingUpUser: { note: "cerca l'utente per email" },
    checkingPhoneOnFile: { note: "guarda il telefono dell'account" },
    welcomingBack: { note: 'account con telefono: accesso subito' },
    claimingAccount: { note: "email mai confermata: la conferma e mette da parte il telefono dell'account" },
    sendingPhoneOnFileCode: { note: "invia SMS al telefono dell'account" },
    verifyingPhoneOnFileCode: { note: 'verifica il codice SMS' },
    decliningPhoneOnFile: { note: 'il telefono non è suo: resta tolto' },
    sendingRegistrationEmailCode: { note: "invia l'email con il codice" },
    verifyingRegistrationEmailCode: { note: 'verifica il codice email' },
    checkingRegistrationEmail: { note: "cerca l'utente per email" },
    issuingRegisterProof: { note: 'email verificata: prepara il modulo' },
    checkingRegistrationPhone: { note: 'controlla che il telefono sia libero' },
    registeringUser: { note: "crea l'account" },
    confirmingDoi: { note: "conferma l'email (doppio opt-in)" },
    checkingNewPhone: { note: 'controlla che il telefono sia libero' },
    sendingNewPhoneCode: { note: 'invia SMS al nuovo telefono' },
    verifyingNewPhoneCode: { note: 'verifica il codice SMS' },
    recheckingNewPhone: { note: 'ricontrolla che il telefono sia libero' },
    reviewingProfile: { note: 'controlla il telefono del profilo' },
    checkingProfilePhone: { note: 'controlla che il telefono sia libero' },
    savingProfile: { note: 'sceglie i dati da salvare' },
    savingIdentity: { note: 'salva nome e cognome' },
    savingCustomFields: { note: 'salva città, data di nascita e telefono' },
    issuingToken: { note: 'emette il token di accesso' },
    ingestingLogin: { note: "segnala l'accesso al collector" },
    verifyingPasskey: { note: 'verifica la passkey (nessun codice)' },
    offeringPasskey: { note: 'prepara le opzioni della nuova passkey' },
    enrollingPasskey: { note: 'verifica e salva la nuova passkey' },
  } satisfies Record<LoginFlowState, StateLabel>,

  actions: {
    LOGIN: {
      sendingSmsCode: 'inserisce il telefono',
      sendingEmailCode: "inserisce l'email",
      askingPassword: 'sceglie «Accedi con password»',
    },
    VERIFY_OTP: { '*': 'invia il codice', decliningPhoneOnFile: 'sceglie «Non è il mio numero»' },
    REGISTER: {
      sendingRegistrationEmailCode: "inserisce l'email",
      checkingRegistrationPhone: 'invia il modulo',
      registeringUser: 'invia il modulo',
    },
    ADD_PHONE: 'aggiunge un telefono',
    UPDATE_PROFILE: 'salva il profilo',
    PASSKEY_LOGIN: 'sceglie la sua passkey',
    PASSKEY_ENROL_OPTIONS: 'sceglie «Crea una passkey»',
    PASSKEY_ENROL: 'crea la passkey sul dispositivo',
  } satisfies Record<UserEventType, ActionLabel>,

  /** The mistake behind a refusal: by `reason`, or `reason:field` where the field says more. */
  refusals: {
    invalid: 'codice sbagliato',
    expired: 'codice scaduto',
    too_many_attempts: 'troppi codici sbagliati',
    phone_taken: 'il telefono è di un altro account',
    phone_on_hold: "il telefono è in attesa: il titolare dell'email non ha ancora scelto se tenerlo",
    phone_not_verified: 'telefono diverso da quello verificato con il codice',
    proof_required: 'manca la prova del passo precedente',
    invalid_proof: 'email, telefono o account diversi da quelli della prova (la prova è di un altro utente)',
    invalid_request: 'manca un dato richiesto (errore del frontend)',
    'invalid_request:identifier': "non è né un'email né un numero di telefono",
    'invalid_request:uid': "manca l'account (uid)",
  } satisfies Record<FlowFailureReason, string> & Record<string, string>,
} as const;

export const isScreenLabel = (label: StateLabel): label is ScreenLabel => 'screen' in label;

/** The label of a state by key, or undefined for a key the table does not know (a compound state). */
export function stateLabel(state: string): StateLabel | undefined {
  return (LABELS.states as Record<string, StateLabel>)[state];
}

/** `14 · Inserisci il codice SMS`, or the screen's name alone where it has no step. */
export function screenTitle(state: string, step: string | number | null | undefined): string {
  const label = stateLabel(state);
  if (!label || !isScreenLabel(label)) throw new Error(`labels: "${state}" is not a screen`);
  return step === null || step === undefined ? label.screen : `${step} · ${label.screen}`;
}

/** The user's action for `event` leading into `into` (the first state it enters). */
export function actionLabel(event: string, into: string): string | undefined {
  const label = (LABELS.actions as Record<string, ActionLabel>)[event];
  if (label === undefined || typeof label === 'string') return label;
  const byState = label as Record<string, string>;
  return byState[into] ?? byState['*'];
}

/** The mistake behind a refusal, in words. */
export function refusalLabel(reason: string, field?: string): string | undefined {
  const table = LABELS.refusals as Record<string, string>;
  return (field !== undefined ? table[`${reason}:${field}`] : undefined) ?? table[reason];
}
