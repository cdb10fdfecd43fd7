import { funnelDiagrams } from '../../../src/domain/funnel/counting';
import {
  JOURNEY_TITLES_EN,
  journeyName,
  percent,
  REFUSAL_WORDS,
  refusalText,
  refusalWords,
  repeatsText,
  screenName,
  seconds,
} from '../../../src/domain/funnel/words';
import { catalogue } from '../../../src/core/errors';

/*
 * One spelling per figure, for the pages, the diagrams and the terminal: a duration is the bound
 * of its bucket, never rounded into another (90 s is not "2 min"); every refusal reason of the
 * catalogue has product words in Italian and in English, none its code; every screen and journey
 * of the diagrams has an English title.
 */

describe('the funnel words', () => {
  it('spell a duration as the bound it is, in the unit that holds it whole', () => {
    expect([5, 59, 60, 90, 120, 180, 300, 900, 3600, null].map(seconds)).toEqual([
      '≤ 5 s',
      '≤ 59 s',
      '≤ 1 min',
      '≤ 90 s',
      '≤ 2 min',
      '≤ 3 min',
      '≤ 5 min',
      '≤ 15 min',
      '≤ 1 h',
      '–',
    ]);
  });

  it('spell shares with one decimal in each language', () => {
    expect([percent(0.45), percent(0.45, 'en'), percent(1), percent(0.9523, 'en'), percent(null)]).toEqual([
      '45,0 %',
      '45.0 %',
      '100,0 %',
      '95.2 %',
      '–',
    ]);
  });

  it('give every refusal of the catalogue product words in both languages, never its code', () => {
    for (const reason of Object.keys(catalogue)) {
      for (const locale of ['it', 'en'] as const) {
        const words = refusalWords(reason, locale);
        expect({ reason, locale, words }).toEqual({
          reason,
          locale,
          words: expect.not.stringMatching(new RegExp(`^${reason}$|_`)),
        });
      }
      expect(refusalWords(reason, 'it')).not.toBe(refusalWords(reason, 'en'));
    }
    expect(Object.keys(REFUSAL_WORDS).sort()).toEqual(Object.keys(catalogue).sort());
    expect(refusalText({ reason: 'delivery_failed', people: 13, count: 13 }, 0, 'it')).toBe(
      'codice non inviato: nessun fornitore lo ha accettato: 13 persone, 13 volte',
    );
    expect(refusalText({ reason: 'invalid', people: 1, count: 3 }, 4, 'en')).toBe(
      'wrong code: 1 person (25.0 %), 3 times',
    );
  });

  it('read repeats as requests more and the people who sent them', () => {
    expect(repeatsText(2, 1)).toBe('2 richieste in più (1 persona)');
    expect(repeatsText(1, 1, 'en')).toBe('1 more request (1 person)');
  });

  it('name every screen and journey of the diagrams in English, never by its state', async () => {
    for (const diagram of await funnelDiagrams()) {
      expect(journeyName(diagram, 'en')).toBe(JOURNEY_TITLES_EN[diagram.id as keyof typeof JOURNEY_TITLES_EN]);
      for (const screen of diagram.screens) {
        const name = screenName(screen, 'en');
        expect({ state: screen.state, name }).toEqual({
          state: screen.state,
          name: expect.not.stringContaining(screen.state),
        });
        expect(screenName(screen, 'it')).toBe(screen.title);
      }
    }
  });
});
