/* The funnel's figures on the pages of /flows: every number spelled by src/flows/funnel-words.ts (as the terminal's), the dates here. */

export { percent, persons, refusalText, repeatsText, seconds } from '../../flows/funnel-words';

export const when = (iso: string) => new Date(iso).toLocaleString('it-IT', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'short' }) + ' UTC';
