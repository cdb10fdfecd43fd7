/* The funnel's figures on the pages of /flows: every number spelled by src/domain/funnel/words.ts (as the terminal's), the dates here. */

export { percent, persons, refusalText, repeatsText, seconds } from '../../domain/funnel/words';

export const when = (iso: string) =>
  new Date(iso).toLocaleString('it-IT', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'short' }) + ' UTC';
