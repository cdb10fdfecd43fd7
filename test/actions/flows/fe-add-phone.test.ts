import { useNock } from '../../support/nock';
import { fixture, intercept, paths, setCookies } from '../identity/support';
import { smsGateway, useSmtp } from '../otp/harness';
import { collector, flowsApp, NEW_PHONE, searchReply, tokenFor } from './support';

const GIULIA = { uid: 'PNIg1ul1aB1anc', email: 'giulia.bianchi@example.com' };

describe('FeAddPhone', () => {
  useNock();
  const smtp = useSmtp();

  it('sends an SMS code to a free phone: 62, screen otp_phone, the otp object and a pending_proof', async () => {
    const { call, stepProof } = flowsApp(smtp.port());
    const sms = smsGateway();
    const search = intercept('POST', paths.search, 200, searchReply());
    const proof = stepProof({ step: 61, flow: 'email_add_phone', ...GIULIA });
    const res = await call('FeAddPhone', {
      phone: '333 987 6543',
      uid: GIULIA.uid,
      email: GIULIA.email,
      flow: 'email_add_phone',
      proof,
    });
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: {
        next_step: 62,
        flow: 'email_add_phone',
        screen: 'otp_phone',
        uid: GIULIA.uid,
        otp: {
          resent: false,
          retry_after: 60,
          cooldown: 60,
          expires_in: 300,
          notified: { sms: true, email: false, channel: 'sms' },
        },
        pending_proof: expect.any(String),
      },
    });
    expect(search.scope.isDone()).toBe(true);
    expect(sms.sent.map((s) => s.receiver)).toEqual([NEW_PHONE]);
  });

  it('answers phone_taken, with the contract’s text, and sends nothing when another account holds the phone', async () => {
    const { call, stepProof } = flowsApp(smtp.port());
    const sms = smsGateway();
    intercept('POST', paths.search, 200, searchReply({ uid: 'PNIsomeoneelse', digits: '393339876543' }));
    const proof = stepProof({ step: 61, flow: 'email_add_phone', ...GIULIA });
    const res = await call('FeAddPhone', { phone: NEW_PHONE, uid: GIULIA.uid, flow: 'email_add_phone', proof });
    expect(res.body).toEqual({
      success: false,
      error: 'Telefono già registrato su un altro account',
      data: { reason: 'phone_taken' },
    });
    expect(sms.sent).toHaveLength(0);
  });

  it('saves the verified phone and logs in: FeVerifyOtp on the 62 code answers 90 with a token', async () => {
    const { call, deps, stepProof } = flowsApp(smtp.port());
    const sms = smsGateway();
    collector();
    intercept('POST', paths.search, 200, searchReply());
    const added = await call('FeAddPhone', {
      phone: NEW_PHONE,
      uid: GIULIA.uid,
      flow: 'email_add_phone',
      proof: stepProof({ step: 61, flow: 'email_add_phone', ...GIULIA }),
    });

    intercept('POST', paths.search, 200, searchReply());
    const custom = intercept('POST', paths.update, 200, fixture('user-update'));
    intercept('POST', paths.token, 200, tokenFor(GIULIA.uid));
    const res = await call('FeVerifyOtp', {
      flow: 'email_add_phone',
      phone: NEW_PHONE,
      uid: GIULIA.uid,
      otp_code: sms.codes()[0],
      pending_proof: added.body.data.pending_proof,
    });
    expect(res.body.data).toEqual({
      next_step: 90,
      flow: 'email_add_phone',
      screen: 'success',
      done: true,
      uid: GIULIA.uid,
      access_token: tokenFor(GIULIA.uid).access_token,
      proof: expect.any(String),
    });
    expect(custom.seen[0]!.body).toEqual({ otp_phone: 393339876543 });
    expect(setCookies(res).join()).toContain('__utp=');
    await deps.loginIngest.drain(2000);
  });

  it('refuses without a proof (proof_required) and searches nothing', async () => {
    const { call } = flowsApp(smtp.port());
    const search = intercept('POST', paths.search, 200, searchReply());
    const res = await call('FeAddPhone', { phone: NEW_PHONE, uid: GIULIA.uid });
    expect(res.body).toMatchObject({
      success: false,
      error: 'Verifica richiesta: conferma prima il codice ricevuto.',
      data: { reason: 'proof_required' },
    });
    expect(search.scope.isDone()).toBe(false);
  });

  it('refuses a proof of another user’s uid (invalid_proof)', async () => {
    const { call, stepProof } = flowsApp(smtp.port());
    const search = intercept('POST', paths.search, 200, searchReply());
    const proof = stepProof({
      step: 90,
      flow: 'email_register_phone',
      uid: 'PNIsomeoneelse',
      email: 'someone@example.com',
    });
    const res = await call('FeAddPhone', { phone: NEW_PHONE, uid: GIULIA.uid, flow: 'email_register_phone', proof });
    expect(res.body).toMatchObject({ success: false, data: { reason: 'invalid_proof', field: 'uid' } });
    expect(search.scope.isDone()).toBe(false);
  });

  it('refuses a phone that does not parse, naming the field', async () => {
    const { call, stepProof } = flowsApp(smtp.port());
    const res = await call('FeAddPhone', {
      phone: 'not a phone',
      uid: GIULIA.uid,
      proof: stepProof({ step: 61, ...GIULIA }),
    });
    expect(res.body).toMatchObject({
      success: false,
      data: { reason: 'invalid_request', issues: [{ path: 'phone' }] },
    });
  });
});
