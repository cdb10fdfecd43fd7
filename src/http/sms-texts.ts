import type { BreakerState } from '../domain/sms/breaker';
import type { DeliveryState } from '../domain/sms/ledger';
import type { NotSentReason } from '../domain/sms/store';
import type { PhoneNumberType } from 'libphonenumber-js';
import type { TextLocale } from '../core/text-locale';

/*
 * Every word of the SMS ledger as an operator reads it, on the /sms page and in `npm run ledger`,
 * in each language the service writes: one surface, one language, states and headings included.
 * The columns are the five states of a message (src/domain/sms/ledger.ts), so they add up to
 * what was sent, and the page says so.
 */

export interface SmsTexts {
  title: string;
  heading(hours: string): string;
  since(at: string): string;
  otherPeriods: string;
  byGroup: string;
  columns: {
    country: string;
    provider: string;
    channel: string;
    attempted: string;
    not_sent: string;
    sent: string;
    delivered: string;
    failed: string;
    waiting: string;
    no_receipt: string;
    unknown: string;
    verified: string;
    conversion: string;
  };
  /** Under the table: what the columns mean and that they add up. */
  legend: string;
  nothingSent: string;
  blocksHeading: string;
  noBlocks: string;
  /** A blocked range in words: why, until when, how to lift it. */
  block(range: string, until: string): string;
  /** Messages no provider took, per provider and reason: the heading, the columns, each reason in words. */
  notSentHeading: string;
  notSentColumns: { provider: string; channel: string; reason: string; count: string };
  notSentReasons: Record<NotSentReason, string>;
  noneNotSent: string;
  challengesHeading: string;
  /** The bot challenge's decisions over the period (whole hours). */
  challenges(counts: { challenged: number; solved: number; failed: number }): string;
  loginsHeading: string;
  /** Logins over the period (whole hours) by method, and the SMS the passkey logins saved. */
  logins(counts: { code: number; passkey: number; sms_saved: number }): string;
  providersHeading: string;
  providerColumns: { provider: string; channel: string; circuit: string; receipts: string };
  /** The heading of the conversion per channel (sms, whatsapp, email) and country. */
  byChannel: string;
  /** How a channel is named on the page. */
  channelNames: Record<'sms' | 'whatsapp' | 'email', string>;
  circuit: Record<BreakerState, string>;
  receipts(posted: boolean): string;
  newestHeading: string;
  entryColumns: {
    accepted: string;
    recipient: string;
    country: string;
    type: string;
    channel: string;
    provider: string;
    state: string;
    verified: string;
  };
  states: Record<DeliveryState, string>;
  /** libphonenumber's number types (the ledger's `number_type`); one it does not name is shown as it is. */
  numberTypes: Partial<Record<PhoneNumberType, string>>;
}

export const SMS_TEXTS: Record<TextLocale, SmsTexts> = {
  it: {
    title: 'SMS: consegne e conversione',
    heading: (hours) =>
      hours === '1'
        ? 'SMS: consegne e conversione nell’ultima ora'
        : `SMS: consegne e conversione nelle ultime ${hours} ore`,
    since: (at) => `Dal ${at}.`,
    otherPeriods: 'Altri periodi',
    byGroup: 'Per paese e fornitore',
    columns: {
      country: 'Paese',
      provider: 'Fornitore',
      channel: 'Canale',
      attempted: 'Tentati',
      not_sent: 'Non inviati',
      sent: 'Inviati',
      delivered: 'Consegnati',
      failed: 'Falliti',
      waiting: 'In attesa',
      no_receipt: 'Senza ricevute',
      unknown: 'Ricevuta in ritardo',
      verified: 'Verificati',
      conversion: 'Conversione',
    },
    legend:
      'Tentati = Inviati + Non inviati (nessun fornitore ha preso il messaggio: contati sotto l’ultimo fornitore chiesto, i motivi più sotto). Inviati = Consegnati + Falliti + In attesa (della ricevuta, ancora in tempo) + Senza ricevute (il fornitore non ne manda, o non sono chieste) + Ricevuta in ritardo (chiesta e mai arrivata in tempo). Conversione: codici verificati su codici inviati.',
    nothingSent: 'Nessun codice inviato in questo periodo.',
    blocksHeading: 'Numerazioni bloccate (difesa dal pumping)',
    noBlocks: 'Nessuna numerazione bloccata.',
    notSentHeading: 'Non inviati, per motivo e fornitore',
    notSentColumns: { provider: 'Fornitore', channel: 'Canale', reason: 'Motivo', count: 'Messaggi' },
    notSentReasons: {
      refused: 'rifiutato dal fornitore (numero non valido, non su WhatsApp, modello respinto)',
      error: 'errore del fornitore (5xx o 429)',
      no_answer: 'nessuna risposta (tempo scaduto o connessione caduta)',
      circuit_open: 'non chiesto: circuito aperto dopo troppi errori di fila',
      no_provider: 'nessun fornitore serve il paese',
    },
    noneNotSent: 'Ogni messaggio tentato è stato preso da un fornitore.',
    challengesHeading: 'Verifica anti-bot',
    challenges: ({ challenged, solved, failed }) =>
      `Per ore intere: chiesta ${challenged}, superata ${solved}, fallita ${failed}.`,
    loginsHeading: 'Accessi',
    logins: ({ code, passkey, sms_saved }) =>
      `Per ore intere: ${code} con un codice, ${passkey} con una passkey; SMS risparmiati: ${sms_saved}.`,
    block: (range, until) =>
      `+${range}… bloccata fino al ${until}: molti codici verso questa numerazione e quasi nessuno verificato. Sblocco: npm run ledger -- --lift ${range}`,
    providersHeading: 'Fornitori',
    providerColumns: { provider: 'Fornitore', channel: 'Canale', circuit: 'Circuito', receipts: 'Ricevute' },
    byChannel: 'Per canale e paese',
    channelNames: { sms: 'SMS', whatsapp: 'WhatsApp', email: 'email' },
    circuit: {
      closed: 'in funzione',
      open: 'escluso dopo troppi errori di fila, riprovato più tardi',
      half_open: 'in prova: il prossimo invio decide se torna in funzione',
    },
    receipts: (posted) => (posted ? 'con ricevute' : 'senza ricevute'),
    newestHeading: 'Ultimi invii',
    entryColumns: {
      accepted: 'Accettato',
      recipient: 'Destinatario',
      country: 'Paese',
      type: 'Tipo',
      channel: 'Canale',
      provider: 'Fornitore',
      state: 'Stato',
      verified: 'Verificato',
    },
    states: {
      waiting: 'in attesa della ricevuta',
      delivered: 'consegnato',
      failed: 'fallito',
      unknown: 'ricevuta in ritardo',
      no_receipt: 'senza ricevute',
    },
    numberTypes: {
      MOBILE: 'cellulare',
      FIXED_LINE_OR_MOBILE: 'fisso o cellulare',
      FIXED_LINE: 'fisso',
      PREMIUM_RATE: 'a pagamento',
      TOLL_FREE: 'numero verde',
      SHARED_COST: 'a costo ripartito',
      VOIP: 'VoIP',
      PERSONAL_NUMBER: 'personale',
      PAGER: 'cercapersone',
      UAN: 'unico nazionale',
      VOICEMAIL: 'segreteria',
    },
  },
  en: {
    title: 'SMS: deliveries and conversion',
    heading: (hours) =>
      hours === '1'
        ? 'SMS: deliveries and conversion over the last hour'
        : `SMS: deliveries and conversion over the last ${hours} hours`,
    since: (at) => `Since ${at}.`,
    otherPeriods: 'Other periods',
    byGroup: 'By country and provider',
    columns: {
      country: 'Country',
      provider: 'Provider',
      channel: 'Channel',
      attempted: 'Tried',
      not_sent: 'Not sent',
      sent: 'Sent',
      delivered: 'Delivered',
      failed: 'Failed',
      waiting: 'Waiting',
      no_receipt: 'No receipts',
      unknown: 'Receipt late',
      verified: 'Verified',
      conversion: 'Conversion',
    },
    legend:
      'Tried = Sent + Not sent (no provider took the message: counted under the last provider asked, the reasons further down). Sent = Delivered + Failed + Waiting (for a receipt, still in time) + No receipts (the provider posts none, or none are asked for) + Receipt late (asked for, never came in time). Conversion: codes verified over codes sent.',
    nothingSent: 'No code sent in this period.',
    blocksHeading: 'Blocked ranges (pumping defence)',
    noBlocks: 'No range blocked.',
    notSentHeading: 'Not sent, by reason and provider',
    notSentColumns: { provider: 'Provider', channel: 'Channel', reason: 'Reason', count: 'Messages' },
    notSentReasons: {
      refused: 'refused by the provider (a bad number, not on WhatsApp, a template rejected)',
      error: 'provider error (5xx or 429)',
      no_answer: 'no answer (timed out or connection dropped)',
      circuit_open: 'not asked: circuit open after too many failures in a row',
      no_provider: 'no provider serves the country',
    },
    noneNotSent: 'Every message tried was taken by a provider.',
    challengesHeading: 'Bot challenge',
    challenges: ({ challenged, solved, failed }) =>
      `Whole hours: asked ${challenged}, solved ${solved}, failed ${failed}.`,
    loginsHeading: 'Logins',
    logins: ({ code, passkey, sms_saved }) =>
      `Whole hours: ${code} by a code, ${passkey} by a passkey; SMS saved: ${sms_saved}.`,
    block: (range, until) =>
      `+${range}… blocked until ${until}: many codes to this range and hardly any verified. Lift it: npm run ledger -- --lift ${range}`,
    providersHeading: 'Providers',
    providerColumns: { provider: 'Provider', channel: 'Channel', circuit: 'Circuit', receipts: 'Receipts' },
    byChannel: 'By channel and country',
    channelNames: { sms: 'SMS', whatsapp: 'WhatsApp', email: 'email' },
    circuit: {
      closed: 'working',
      open: 'taken out after too many failures in a row, tried again later',
      half_open: 'on trial: the next send decides whether it is back',
    },
    receipts: (posted) => (posted ? 'with receipts' : 'no receipts'),
    newestHeading: 'Newest sends',
    entryColumns: {
      accepted: 'Accepted',
      recipient: 'Recipient',
      country: 'Country',
      type: 'Type',
      channel: 'Channel',
      provider: 'Provider',
      state: 'State',
      verified: 'Verified',
    },
    states: {
      waiting: 'waiting for its receipt',
      delivered: 'delivered',
      failed: 'failed',
      unknown: 'receipt late',
      no_receipt: 'no receipts',
    },
    numberTypes: {
      MOBILE: 'mobile',
      FIXED_LINE_OR_MOBILE: 'fixed line or mobile',
      FIXED_LINE: 'fixed line',
      PREMIUM_RATE: 'premium rate',
      TOLL_FREE: 'toll free',
      SHARED_COST: 'shared cost',
      VOIP: 'VoIP',
      PERSONAL_NUMBER: 'personal',
      PAGER: 'pager',
      UAN: 'universal access',
      VOICEMAIL: 'voicemail',
    },
  },
};

/** The ledger's columns in order, as the page and the terminal show them. */
export const GROUP_COLUMNS = [
  'sent',
  'not_sent',
  'attempted',
  'delivered',
  'failed',
  'waiting',
  'no_receipt',
  'unknown',
  'verified',
] as const;
