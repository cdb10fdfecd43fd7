import {
  journeys,
  replayJourney,
  worldEffects,
  type EffectCall,
  type FakeWorld,
} from '../../machines/diagrams/journeys';

// The contract's typical frontend sequences, replayed request by request: each request resumes from
// the proofs earlier answers handed out. Expected per request: steps, effects in order, answer.

type Expected = Array<{ action: string; steps: Array<number | string>; calls: string[]; next: number }>;

const expected: Record<string, Expected> = {
  'Phone, user exists': [
    { action: 'FeLogin', steps: [13, 14], calls: ['sendOtp'], next: 14 },
    {
      action: 'FeVerifyOtp',
      steps: [90],
      calls: ['verifyOtp', 'searchUserByPhone', 'issueToken', 'ingestLogin'],
      next: 90,
    },
  ],
  'Phone, new user': [
    { action: 'FeLogin', steps: [13, 14], calls: ['sendOtp'], next: 14 },
    { action: 'FeVerifyOtp', steps: [24], calls: ['verifyOtp', 'searchUserByPhone'], next: 24 },
    { action: 'FeRegister', steps: [23], calls: ['sendOtp'], next: 23 },
    { action: 'FeVerifyOtp', steps: [24, 30, '24b', 25], calls: ['verifyOtp', 'lookupUserByEmail'], next: 25 },
    {
      action: 'FeRegister',
      steps: [36, 40, 42, 90],
      calls: [
        'searchUserByPhone',
        'registerUser',
        'confirmDoi',
        'updateProfile',
        'updateProfile',
        'issueToken',
        'ingestLogin',
      ],
      next: 90,
    },
  ],
  'Email not registered': [
    { action: 'FeLogin', steps: [32, 33], calls: ['sendOtp'], next: 33 },
    { action: 'FeVerifyOtp', steps: [34, 30, 37], calls: ['verifyOtp', 'lookupUserByEmail'], next: 37 },
    {
      action: 'FeRegister',
      steps: [36, 40, 90],
      calls: ['registerUser', 'confirmDoi', 'updateProfile', 'issueToken', 'ingestLogin'],
      next: 90,
    },
    { action: 'FeAddPhone', steps: [62], calls: ['searchUserByPhone', 'sendOtp'], next: 62 },
    {
      action: 'FeVerifyOtp',
      steps: [42, 90],
      calls: ['verifyOtp', 'searchUserByPhone', 'updateProfile', 'issueToken', 'ingestLogin'],
      next: 90,
    },
    { action: 'FeUpdateProfile', steps: [42, 90], calls: ['updateProfile', 'issueToken', 'ingestLogin'], next: 90 },
  ],
  'Email with otp_phone': [
    { action: 'FeLogin', steps: [32, 33], calls: ['sendOtp'], next: 33 },
    {
      action: 'FeVerifyOtp',
      steps: [34, 30, 31, 65, 90],
      calls: ['verifyOtp', 'lookupUserByEmail', 'issueToken', 'ingestLogin'],
      next: 90,
    },
  ],
  'Email with otp_phone, email never confirmed: the phone proven': [
    { action: 'FeLogin', steps: [32, 33], calls: ['sendOtp'], next: 33 },
    {
      action: 'FeVerifyOtp',
      steps: [34, 30, 31, 65],
      calls: ['verifyOtp', 'lookupUserByEmail', 'claimAccount', 'sendOtp'],
      next: 65,
    },
    {
      action: 'FeVerifyOtp',
      steps: [42, 90],
      calls: ['verifyOtp', 'searchUserByPhone', 'updateProfile', 'issueToken', 'ingestLogin'],
      next: 90,
    },
  ],
  'Email with otp_phone, email never confirmed: not my phone': [
    { action: 'FeLogin', steps: [32, 33], calls: ['sendOtp'], next: 33 },
    {
      action: 'FeVerifyOtp',
      steps: [34, 30, 31, 65],
      calls: ['verifyOtp', 'lookupUserByEmail', 'claimAccount', 'sendOtp'],
      next: 65,
    },
    { action: 'FeVerifyOtp', steps: [61], calls: ['releasePhone'], next: 61 },
    { action: 'FeAddPhone', steps: [62], calls: ['searchUserByPhone', 'sendOtp'], next: 62 },
    {
      action: 'FeVerifyOtp',
      steps: [42, 90],
      calls: ['verifyOtp', 'searchUserByPhone', 'updateProfile', 'issueToken', 'ingestLogin'],
      next: 90,
    },
  ],
  'Email without phone': [
    { action: 'FeLogin', steps: [32, 33], calls: ['sendOtp'], next: 33 },
    { action: 'FeVerifyOtp', steps: [34, 30, 31, 61], calls: ['verifyOtp', 'lookupUserByEmail'], next: 61 },
    { action: 'FeAddPhone', steps: [62], calls: ['searchUserByPhone', 'sendOtp'], next: 62 },
    {
      action: 'FeVerifyOtp',
      steps: [42, 90],
      calls: ['verifyOtp', 'searchUserByPhone', 'updateProfile', 'issueToken', 'ingestLogin'],
      next: 90,
    },
  ],
  'Email registration through FeRegister': [
    { action: 'FeRegister', steps: [23], calls: ['sendOtp'], next: 23 },
    { action: 'FeVerifyOtp', steps: [24, 30, 37], calls: ['verifyOtp', 'lookupUserByEmail'], next: 37 },
    {
      action: 'FeRegister',
      steps: [36, 40, 90],
      calls: ['registerUser', 'confirmDoi', 'updateProfile', 'issueToken', 'ingestLogin'],
      next: 90,
    },
  ],
  'Password path': [{ action: 'FeLogin', steps: [60], calls: [], next: 60 }],
  'Passkey, enrolled after a code login': [
    { action: 'PasskeyLogin', steps: [101, 90], calls: ['verifyPasskey', 'issueToken', 'ingestLogin'], next: 90 },
  ],
  'Passkey enrolled after a phone login': [
    { action: 'FeLogin', steps: [13, 14], calls: ['sendOtp'], next: 14 },
    {
      action: 'FeVerifyOtp',
      steps: [90],
      calls: ['verifyOtp', 'searchUserByPhone', 'issueToken', 'ingestLogin'],
      next: 90,
    },
    { action: 'PasskeyEnrolOptions', steps: [102], calls: ['passkeyEnrolOptions'], next: 102 },
    { action: 'PasskeyEnrol', steps: [103], calls: ['enrolPasskey'], next: 103 },
  ],
};

describe('typical sequences', () => {
  it('has an expectation for every journey', () => {
    expect(journeys.map((j) => j.name).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(journeys.map((j) => [j.name, j] as const))('%s replays request by request', async (name, journey) => {
    const replayed = await replayJourney(journey);
    expect(
      replayed.map((r) => ({
        action: r.action,
        steps: r.steps,
        calls: r.calls.map((c) => c.name),
        next: r.answer.nextStep,
      })),
    ).toEqual(expected[name]);
    expect(replayed.every((r) => r.answer.ok)).toBe(true);
  });

  it('phone, user exists: issues the token for the phone holder and ingests it', async () => {
    const journey = journeys.find((j) => j.name === 'Phone, user exists')!;
    const replayed = await replayJourney(journey);
    const last = replayed[replayed.length - 1]!;
    expect(last.calls.find((c) => c.name === 'ingestLogin')?.input).toEqual({
      uid: 'uid-anna',
      accessToken: 'token-for-uid-anna',
    });
    expect(last.answer).toMatchObject({ accessToken: 'token-for-uid-anna', done: true, screen: 'success' });
  });

  it('email not registered: the new account ends with the verified phone and the personal data saved', async () => {
    const journey = journeys.find((j) => j.name === 'Email not registered')!;
    const effects = jest.fn((world: FakeWorld, calls: EffectCall[]) => worldEffects(world, calls));
    const replayed = await replayJourney(journey, effects);
    const updates = replayed.flatMap((r) => r.calls.filter((c) => c.name === 'updateProfile').map((c) => c.input));
    expect(updates).toEqual([
      { uid: 'uid-new-1', step: 40, fields: { first_name: 'Nina', last_name: 'Neri' } },
      { uid: 'uid-new-1', step: 42, fields: { otp_phone: '+393339876543' } },
      { uid: 'uid-new-1', step: 42, fields: { city: 'Milano', birth_date: '1990-01-31' } },
    ]);
    expect(effects).toHaveBeenCalledTimes(journey.requests.length);
  });

  describe('an account whose email was never confirmed, holding a phone', () => {
    const proven = journeys.find((j) => j.id === 'email-login-unconfirmed-phone')!;
    const declined = journeys.find((j) => j.id === 'email-login-phone-declined')!;
    const PHONE = proven.users[0]!.phone!;

    it('claims it once the email is proven and sends the code to the phone it held, shown masked, the proof binding that phone', async () => {
      const [, emailProven] = await replayJourney({ ...proven, requests: proven.requests.slice(0, 2) });
      expect(emailProven!.calls.find((c) => c.name === 'claimAccount')?.input).toEqual({
        uid: 'uid-elena',
        phone: PHONE,
      });
      expect(emailProven!.calls.find((c) => c.name === 'sendOtp')?.input).toEqual({ key: PHONE, phone: PHONE });
      expect(emailProven!.answer).toMatchObject({
        nextStep: 65,
        flow: 'email_with_phone',
        phoneOnFile: PHONE,
        uid: 'uid-elena',
      });
      expect(emailProven!.answer.proof).toEqual({
        field: 'pending_proof',
        claims: {
          kind: 'pending',
          flow: 'email_with_phone',
          step: 65,
          uid: 'uid-elena',
          email: 'elena@example.com',
          phone: PHONE,
        },
      });
    });

    it('keeps the phone of the person who proves it: saved again, its hold ended, logged in', async () => {
      const world: FakeWorld[] = [];
      const replayed = await replayJourney(proven, (w, calls) => (world.push(w), worldEffects(w, calls)));
      const last = replayed[replayed.length - 1]!;
      expect(last.calls.find((c) => c.name === 'updateProfile')?.input).toEqual({
        uid: 'uid-elena',
        step: 42,
        fields: { otp_phone: PHONE },
      });
      expect(last.answer).toMatchObject({ nextStep: 90, accessToken: 'token-for-uid-elena', flow: 'email_with_phone' });
      expect(world[0]!.users[0]).toEqual({ uid: 'uid-elena', email: 'elena@example.com', phone: PHONE });
      expect(world[0]!.held).toEqual({});
    });

    it('leaves the phone dropped for the person who declines it, and asks for theirs', async () => {
      const world: FakeWorld[] = [];
      const replayed = await replayJourney(
        { ...declined, requests: declined.requests.slice(0, 3) },
        (w, calls) => (world.push(w), worldEffects(w, calls)),
      );
      const answer = replayed[2]!.answer;
      expect(answer).toMatchObject({ nextStep: 61, flow: 'email_add_phone', uid: 'uid-francesca' });
      expect(answer.phoneOnFile).toBeUndefined();
      expect(answer.proof).toEqual({
        field: 'proof',
        claims: {
          kind: 'verified',
          flow: 'email_add_phone',
          step: 61,
          uid: 'uid-francesca',
          email: 'francesca@example.com',
          linked: ['uid'],
        },
      });
      expect(world[0]!.users[0]).toEqual({ uid: 'uid-francesca', email: 'francesca@example.com' });
      expect(world[0]!.held).toEqual({});
    });

    it('refuses a login with the phone while it is held, before the owner chooses', async () => {
      const squatter = { ...journeys.find((j) => j.id === 'phone-login')!, users: [] };
      const world: FakeWorld = {
        users: [{ uid: 'uid-elena', email: 'elena@example.com' }],
        code: '123456',
        held: { 'uid-elena': squatter.requests[0]!.body.identifier as string },
      };
      const replayed = await replayJourney(squatter, (_w, calls) => worldEffects(world, calls));
      expect(replayed[1]!.answer).toMatchObject({ ok: false, failure: { reason: 'phone_on_hold' } });
      expect(replayed[1]!.calls.map((c) => c.name)).toEqual(['verifyOtp', 'searchUserByPhone']);
    });
  });

  it('stops at the first refused request', async () => {
    const journey = {
      ...journeys[0]!,
      requests: [
        { action: 'FeVerifyOtp' as const, body: { flow: 'phone', phone: '+393331234567', otp_code: '000000' } },
        ...journeys[0]!.requests,
      ],
    };
    const replayed = await replayJourney(journey);
    expect(replayed).toHaveLength(1);
    expect(replayed[0]!.answer.failure).toEqual({ reason: 'invalid', data: { valid: false } });
  });
});
