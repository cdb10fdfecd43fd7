import { smsGateway, startApp, useNock, type Harness } from '../actions/otp/harness';

/*
 * How often a code send asks the CSPRNG directly: its claim token and its ledger entry's id are
 * cut from the process's pool of random ids (src/core/random-id.ts), so a send makes no
 * randomBytes call of its own (two before: ~5% of its CPU).
 */

const crypto = { randomBytes: 0 };
jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return {
    ...actual,
    randomBytes: (...args: Parameters<typeof actual.randomBytes>) => (
      crypto.randomBytes++,
      (actual.randomBytes as (size: number) => Buffer)(args[0])
    ),
  };
});

describe('random bytes per code send', () => {
  useNock();
  let app: Harness;
  afterEach(async () => {
    await app?.close();
  });

  it('makes no randomBytes call per send, and still gives each send its own ledger entry', async () => {
    app = await startApp();
    const gateway = smsGateway();
    crypto.randomBytes = 0;
    for (let i = 0; i < 5; i++) expect((await app.post('otp_generate', { uid: `+39333100010${i}` })).status).toBe(200);
    expect(crypto.randomBytes).toBe(0);
    expect(gateway.sent).toHaveLength(5);
    const entries = await app.deps.sms.ledger.since(0);
    expect(new Set(entries.map((entry) => entry.id)).size).toBe(5);
  });
});
