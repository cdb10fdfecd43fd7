/*
 * The two languages the service writes its own texts in (answers, pages, operator reports):
 * English for `en` and its regions, Italian for anything else, as the envelope's `error`
 * (docs/decisions.md, "Languages"). Times and figures on a page or in a terminal are written the
 * way a reader of that language reads them, in the local time zone of the process showing them.
 */

export type TextLocale = 'it' | 'en';

export const textLocale = (tag: string | undefined): TextLocale =>
  tag !== undefined && /^en(-|$)/i.test(tag) ? 'en' : 'it';

const timeFormats = new Map<TextLocale, Intl.DateTimeFormat>();

/** `27 nov 2026, 14:03:09 CET` / `27 Nov 2026, 14:03:09 CET`: a moment as a reader reads it, not ISO. */
export function readableTime(at: number | string | Date, locale: TextLocale): string {
  let format = timeFormats.get(locale);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    timeFormats.set(locale, format);
  }
  return format.format(new Date(at));
}

/** 0.5 -> `50,0%` / `50.0%`. */
export const readablePercent = (ratio: number, locale: TextLocale): string =>
  new Intl.NumberFormat(locale, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(ratio);
