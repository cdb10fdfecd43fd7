/* How the funnel's figures read in Italian, on the funnel page, on /flows and on its diagrams alike. */

export const percent = (value: number | null) => (value === null ? '–' : `${(Math.round(value * 1000) / 10).toLocaleString('it-IT')} %`);
export const seconds = (value: number | null) => (value === null ? '–' : value < 60 ? `≤ ${value} s` : `≤ ${Math.round(value / 60)} min`);
export const when = (iso: string) => new Date(iso).toLocaleString('it-IT', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'short' }) + ' UTC';

const persons = (n: number) => `${n} ${n === 1 ? 'persona' : 'persone'}`;
const times = (n: number) => `${n} ${n === 1 ? 'volta' : 'volte'}`;

/** A refusal as people and requests, and the share of those who reached the screen: `codice sbagliato: 8 persone (20 %), 11 volte`. */
export const refusalText = (refusal: { mistake: string; people: number; count: number }, arrived: number) =>
  `${refusal.mistake}: ${persons(refusal.people)}${arrived > 0 ? ` (${percent(refusal.people / arrived)})` : ''}, ${times(refusal.count)}`;

/** Requests repeated on a screen, and how many each person sent on average: `richieste ripetute 10 (1,1 a persona)`. */
export const repeatsText = (repeats: number, arrived: number) =>
  `richieste ripetute ${repeats}${arrived > 0 ? ` (${(Math.round(((arrived + repeats) / arrived) * 10) / 10).toLocaleString('it-IT')} a persona)` : ''}`;
