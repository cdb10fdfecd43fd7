import { createActor } from 'xstate';
import { journeyRecorderFor } from '../../../src/flows/journey-recorder';
import { useNock } from '../../support/nock';
import { fixture, intercept, paths } from '../identity/support';
import { smsGateway, useSmtp } from '../otp/harness';
import { collector, flowsApp, MARIO, NEW_PHONE, searchReply } from './support';

// Every XState actor the service could make goes through here: a login journey's request makes none.
jest.mock('xstate', () => {
  const actual = jest.requireActual('xstate');
  return { ...actual, createActor: jest.fn(actual.createActor) };
});
const actorsMade = createActor as unknown as jest.Mock;

describe('Fe* requests without an XState actor', () => {
  useNock();
  const smtp = useSmtp();

  it('logs in by phone making no actor per request, recorded for replay as before', async () => {
    const app = flowsApp(smtp.port(), { debug: true });
    collector();
    // The first request of the process steps the machine once for its scope (machines/macrostep.ts).
    const sms = smsGateway();
    await app.call('FeLogin', { identifier: NEW_PHONE });
    actorsMade.mockClear();
    await app.call('FeLogin', { identifier: MARIO.phone });
    intercept('POST', paths.search, 200, searchReply(MARIO));
    intercept('POST', paths.token, 200, fixture('token'));
    const res = await app.call('FeVerifyOtp', { flow: 'phone', phone: MARIO.phone, otp_code: sms.codes().at(-1) });
    expect(res.body.data).toMatchObject({ next_step: 90, access_token: expect.any(String) });
    expect(actorsMade).not.toHaveBeenCalled();
    const journey = journeyRecorderFor(app.deps)!
      .list()
      .find((j) => j.about.includes(`phone:${MARIO.phone}`));
    const [login, verify] = journey!.requests;
    expect(login).toMatchObject({
      action: 'FeLogin',
      resumed: 'enteringIdentifier',
      states: ['sendingSmsCode', 'awaitingPhoneCode'],
      steps: [13, 14],
    });
    expect(login!.effects.map((e) => [e.name, e.outcome])).toEqual([['sendOtp', 'ok']]);
    expect(verify).toMatchObject({
      action: 'FeVerifyOtp',
      resumed: 'awaitingPhoneCode',
      answer: { state: 'loggedIn' },
    });
    expect(verify!.effects.map((e) => e.name)).toEqual(['verifyOtp', 'searchUserByPhone', 'issueToken', 'ingestLogin']);
    await app.deps.loginIngest.drain(2000);
  });
});
