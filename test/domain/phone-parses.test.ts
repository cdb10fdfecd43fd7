import { smsGateway, startApp, useNock, type Harness } from '../actions/otp/harness';
import { toE164 } from '../../src/domain/phone';

/*
 * How often a code send parses its phone: libphonenumber's two entry points wrapped to count
 * their calls. A new number written as E.164 (what frontends send back) is parsed once, with the
 * full metadata, for its validity, its type and its region together; one typed another way is
 * parsed once for its validity (the default metadata) and once for its type and region (the full
 * one). The OTP service and the SMS router share them; a number seen before is not parsed again.
 */

const mockParses = { default: 0, full: 0 };
jest.mock('libphonenumber-js', () => {
  const actual = jest.requireActual<typeof import('libphonenumber-js')>('libphonenumber-js');
  return {
    ...actual,
    parsePhoneNumberFromString: (...args: Parameters<typeof actual.parsePhoneNumberFromString>) => (
      mockParses.default++,
      actual.parsePhoneNumberFromString(...args)
    ),
  };
});
jest.mock('libphonenumber-js/max', () => {
  const actual = jest.requireActual<typeof import('libphonenumber-js/max')>('libphonenumber-js/max');
  return {
    ...actual,
    parsePhoneNumberFromString: (...args: Parameters<typeof actual.parsePhoneNumberFromString>) => (
      mockParses.full++,
      actual.parsePhoneNumberFromString(...args)
    ),
  };
});

const parsesDuring = async (during: () => Promise<unknown>) => {
  mockParses.default = 0;
  mockParses.full = 0;
  await during();
  return { ...mockParses };
};

describe('phone parses per code send', () => {
  useNock();
  let app: Harness;
  afterEach(async () => {
    await app?.close();
  });

  it('parses a new number once (E.164) or once with each metadata (typed), and a number seen before not at all', async () => {
    app = await startApp();
    const gateway = smsGateway();
    const send = (uid: string) => async () => expect((await app.post('otp_generate', { uid })).status).toBe(200);
    expect(await parsesDuring(send('+393331000001'))).toEqual({ default: 0, full: 1 });
    app.tick(60_000);
    expect(await parsesDuring(send('+393331000001'))).toEqual({ default: 0, full: 0 });
    expect(await parsesDuring(send('333 100 0002'))).toEqual({ default: 1, full: 1 });
    expect(gateway.sent.map((sent) => sent.receiver)).toEqual(['+393331000001', '+393331000001', '+393331000002']);
  });

  it('normalises a phone seen before without parsing it: typed, stored digits and a refusal alike', async () => {
    const forms = ['+39 333 100 0003', '393331000003', 'not a phone 12345'];
    const first = await parsesDuring(async () => forms.map((form) => toE164(form, 'IT')));
    expect(first.default).toBeGreaterThan(0);
    let again: Array<string | null> = [];
    expect(await parsesDuring(async () => (again = forms.map((form) => toE164(form, 'IT'))))).toEqual({
      default: 0,
      full: 0,
    });
    expect(again).toEqual(['+393331000003', '+393331000003', null]);
    // The region is part of what is asked: the same digits read in another region are parsed again.
    expect((await parsesDuring(async () => toE164('3331000003', 'GB'))).default).toBeGreaterThan(0);
  });
});
