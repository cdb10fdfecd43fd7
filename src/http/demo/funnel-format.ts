/* How the funnel's figures read in Italian, on the funnel page, on /flows and on its diagrams alike. */

export const percent = (value: number | null) => (value === null ? '–' : `${(Math.round(value * 1000) / 10).toLocaleString('it-IT')} %`);
export const seconds = (value: number | null) => (value === null ? '–' : value < 60 ? `≤ ${value} s` : `≤ ${Math.round(value / 60)} min`);
export const when = (iso: string) => new Date(iso).toLocaleString('it-IT', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'short' }) + ' UTC';
