import { CODE, NEW_PHONE, PHONE, SENT, claims, fakeEffects, request } from './login-flow.fakes';

// One test per row of the contract's step table (docs/contract.md#steps), plus the
// refusals around them: steps passed, effects called in order with their inputs, the answer.

const anna = { found: true as const, uid: 'uid-anna', email: 'anna@example.com', phone: PHONE };
const carla = { found: true as const, uid: 'uid-carla', email: 'carla@example.com' };

describe('FeLogin', () => {
  it('sends a phone identifier an SMS-only code (13) and waits for it at 14', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'login', { identifier: PHONE });
    expect(result.steps).toEqual([13, 14]);
    expect(fakes.calls).toEqual([['sendOtp', { key: PHONE, phone: PHONE }]]);
    expect(result.output).toMatchObject({ ok: true, nextStep: 14, flow: 'phone', otp: SENT });
  });

  it('sends an email identifier a code by email (32) and waits for it at 33', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'login', { identifier: 'Anna@Example.com' });
    expect(result.steps).toEqual([32, 33]);
    expect(fakes.calls).toEqual([['sendOtp', { key: 'anna@example.com', email: 'anna@example.com' }]]);
    expect(result.output).toMatchObject({ ok: true, nextStep: 33, flow: 'email' });
  });

  it('takes the password path to 60 without sending a code', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'login', { identifier: 'anna@example.com', method: 'password' });
    expect(result.output).toMatchObject({ ok: true, nextStep: 60 });
    expect(fakes.calls).toEqual([]);
  });

  it('refuses an identifier that is neither a phone nor an email', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'login', { identifier: 'not an identifier' });
    expect(result.output).toMatchObject({
      ok: false,
      nextStep: null,
      failure: { reason: 'invalid_request', data: { field: 'identifier' } },
    });
    expect(fakes.calls).toEqual([]);
  });

  it('rejects with the OTP service’s own error when the send is refused', async () => {
    const blocked = Object.assign(new Error('OTP già inviato. Riprova tra 42 secondi.'), { reason: 'already_sent' });
    const fakes = fakeEffects({ sendOtp: () => Promise.reject(blocked) });
    await expect(request(fakes, 'login', { identifier: PHONE })).rejects.toBe(blocked);
  });
});

describe('FeVerifyOtp', () => {
  it('completes a phone login: code, account, token and ingest, next_step 90', async () => {
    const fakes = fakeEffects({ searchUserByPhone: () => anna });
    const result = await request(fakes, 'verifyOtp', { flow: 'phone', phone: PHONE, otp_code: CODE });
    expect(fakes.calls).toEqual([
      ['verifyOtp', { key: PHONE, code: CODE }],
      ['searchUserByPhone', { phone: PHONE }],
      ['issueToken', { uid: 'uid-anna', stay_logged_in: true }],
      ['ingestLogin', { uid: 'uid-anna', accessToken: 'token-1' }],
    ]);
    expect(result.output).toMatchObject({
      ok: true,
      nextStep: 90,
      flow: 'phone',
      screen: 'success',
      done: true,
      accessToken: 'token-1',
      expiresIn: 3600,
      uid: 'uid-anna',
    });
    expect(result.output.proof).toEqual({
      field: 'proof',
      claims: {
        kind: 'verified',
        flow: 'phone',
        step: 90,
        uid: 'uid-anna',
        email: 'anna@example.com',
        phone: PHONE,
        linked: ['email', 'uid'],
      },
    });
  });

  it('lists the effects and a login_ingestion step in the trace', async () => {
    const fakes = fakeEffects({ searchUserByPhone: () => anna });
    const result = await request(fakes, 'verifyOtp', { flow: 'phone', phone: PHONE, otp_code: CODE });
    expect(result.trace.map((t) => t.step)).toEqual([
      'verifyOtp',
      'searchUserByPhone',
      'issueToken',
      'login_ingestion',
      'step_90',
    ]);
  });

  it('passes stay_logged_in false to the token issue', async () => {
    const fakes = fakeEffects({ searchUserByPhone: () => anna });
    const result = await request(fakes, 'verifyOtp', {
      flow: 'phone',
      phone: PHONE,
      otp_code: CODE,
      stay_logged_in: false,
    });
    expect(fakes.effects.issueToken).toHaveBeenCalledWith(
      { uid: 'uid-anna', stay_logged_in: false },
      expect.anything(),
    );
    expect(result.output.stayLoggedIn).toBe(false);
  });

  it.each(['invalid', 'expired', 'too_many_attempts'] as const)(
    'refuses a code the OTP service finds %s and calls nothing after it',
    async (outcome) => {
      const fakes = fakeEffects({ verifyOtp: () => outcome });
      const result = await request(fakes, 'verifyOtp', { flow: 'phone', phone: PHONE, otp_code: '000000' });
      expect(result.output).toMatchObject({ ok: false, failure: { reason: outcome, data: { valid: false } } });
      expect(fakes.names()).toEqual(['verifyOtp']);
    },
  );

  it('completes the login even when the ingest fails', async () => {
    const fakes = fakeEffects({
      searchUserByPhone: () => anna,
      ingestLogin: () => Promise.reject(new Error('collector down')),
    });
    const result = await request(fakes, 'verifyOtp', { flow: 'phone', phone: PHONE, otp_code: CODE });
    expect(result.output).toMatchObject({ ok: true, nextStep: 90, accessToken: 'token-1' });
  });

  it('sends a verified phone nobody holds to 24 with a phone_proof (flow phone_register)', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'verifyOtp', { flow: 'phone', phone: PHONE, otp_code: CODE });
    expect(fakes.names()).toEqual(['verifyOtp', 'searchUserByPhone']);
    expect(result.output).toMatchObject({ ok: true, nextStep: 24, flow: 'phone_register' });
    expect(result.output.proof).toEqual({
      field: 'phone_proof',
      claims: { kind: 'phone', flow: 'phone_register', step: 24, phone: PHONE },
    });
  });

  it('with flow phone_register and a pending proof passes 24, then 24b register_proof, to next_step 25', async () => {
    const fakes = fakeEffects();
    const pending = claims('pending', 23, 'phone_register', { phone: PHONE, email: 'new@example.com' });
    const result = await request(
      fakes,
      'verifyOtp',
      { flow: 'phone_register', email: 'new@example.com', phone: PHONE, otp_code: CODE },
      { claims: pending },
    );
    expect(result.steps).toEqual([24, 30, '24b', 25]);
    expect(fakes.calls).toEqual([
      ['verifyOtp', { key: 'new@example.com', code: CODE }],
      ['lookupUserByEmail', { email: 'new@example.com' }],
    ]);
    expect(result.output.proof).toEqual({
      field: 'register_proof',
      claims: { kind: 'register', flow: 'phone_register', step: 25, phone: PHONE, email: 'new@example.com' },
    });
  });

  it('with flow phone_register confirms DOI, saves the phone and logs in an account that already holds the email', async () => {
    const fakes = fakeEffects({ lookupUserByEmail: () => carla });
    const pending = claims('pending', 23, 'phone_register', { phone: PHONE, email: 'carla@example.com' });
    const result = await request(fakes, 'verifyOtp', { flow: 'phone_register', otp_code: CODE }, { claims: pending });
    expect(fakes.calls).toEqual([
      ['verifyOtp', { key: 'carla@example.com', code: CODE }],
      ['lookupUserByEmail', { email: 'carla@example.com' }],
      ['confirmDoi', { uid: 'uid-carla' }],
      ['updateProfile', { uid: 'uid-carla', step: 42, fields: { otp_phone: PHONE } }],
      ['issueToken', { uid: 'uid-carla', stay_logged_in: true }],
      ['ingestLogin', { uid: 'uid-carla', accessToken: 'token-1' }],
    ]);
    expect(result.output).toMatchObject({ ok: true, nextStep: 90, accessToken: 'token-1' });
  });

  it('refuses flow phone_register with a pending proof for another email (invalid_proof)', async () => {
    const fakes = fakeEffects();
    const pending = claims('pending', 23, 'phone_register', { phone: PHONE, email: 'new@example.com' });
    const result = await request(
      fakes,
      'verifyOtp',
      { flow: 'phone_register', email: 'other@example.com', otp_code: CODE },
      { claims: pending },
    );
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'invalid_proof', data: { field: 'email' } } });
    expect(fakes.calls).toEqual([]);
  });

  it('refuses flow phone_register without a proof (proof_required)', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'verifyOtp', {
      flow: 'phone_register',
      email: 'new@example.com',
      phone: PHONE,
      otp_code: CODE,
    });
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'proof_required' } });
    expect(fakes.calls).toEqual([]);
  });

  it('runs the email verification (34) and user lookup (30) and sends a new user to 37', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'verifyOtp', { flow: 'email', email: 'new@example.com', otp_code: CODE });
    expect(result.steps).toEqual([34, 30, 37]);
    expect(fakes.calls).toEqual([
      ['verifyOtp', { key: 'new@example.com', code: CODE }],
      ['lookupUserByEmail', { email: 'new@example.com' }],
    ]);
    expect(result.output).toMatchObject({ ok: true, nextStep: 37, flow: 'email_register' });
    expect(result.output.proof).toEqual({
      field: 'register_proof',
      claims: { kind: 'register', flow: 'email_register', step: 37, email: 'new@example.com' },
    });
  });

  it('logs in an existing user with a phone through 31 and 65 to 90', async () => {
    const fakes = fakeEffects({ lookupUserByEmail: () => anna });
    const result = await request(fakes, 'verifyOtp', {
      flow: 'email_with_phone',
      email: 'anna@example.com',
      otp_code: CODE,
    });
    expect(result.steps).toEqual([34, 30, 31, 65, 90]);
    expect(fakes.names()).toEqual(['verifyOtp', 'lookupUserByEmail', 'issueToken', 'ingestLogin']);
    expect(result.output).toMatchObject({ ok: true, nextStep: 90, flow: 'email_with_phone', accessToken: 'token-1' });
  });

  it('sends an existing user without a phone to 61 with a proof binding uid and email', async () => {
    const fakes = fakeEffects({ lookupUserByEmail: () => carla });
    const result = await request(fakes, 'verifyOtp', { flow: 'email', email: 'carla@example.com', otp_code: CODE });
    expect(result.steps).toEqual([34, 30, 31, 61]);
    expect(result.output).toMatchObject({ ok: true, nextStep: 61, flow: 'email_add_phone' });
    expect(result.output.accessToken).toBeUndefined();
    expect(result.output.proof).toEqual({
      field: 'proof',
      claims: {
        kind: 'verified',
        flow: 'email_add_phone',
        step: 61,
        uid: 'uid-carla',
        email: 'carla@example.com',
        linked: ['uid'],
      },
    });
  });

  it('with flow email_add_phone saves the verified phone (42) and logs in', async () => {
    const fakes = fakeEffects();
    const pending = claims('pending', 62, 'email_add_phone', {
      uid: 'uid-carla',
      email: 'carla@example.com',
      phone: NEW_PHONE,
    });
    const result = await request(
      fakes,
      'verifyOtp',
      { flow: 'email_add_phone', phone: NEW_PHONE, uid: 'uid-carla', otp_code: CODE },
      { claims: pending },
    );
    expect(fakes.calls).toEqual([
      ['verifyOtp', { key: NEW_PHONE, code: CODE }],
      ['searchUserByPhone', { phone: NEW_PHONE, account: 'uid-carla' }],
      ['updateProfile', { uid: 'uid-carla', step: 42, fields: { otp_phone: NEW_PHONE } }],
      ['issueToken', { uid: 'uid-carla', stay_logged_in: true }],
      ['ingestLogin', { uid: 'uid-carla', accessToken: 'token-1' }],
    ]);
    expect(result.output).toMatchObject({ ok: true, nextStep: 90, accessToken: 'token-1' });
    expect(result.output.proof?.claims.phone).toBe(NEW_PHONE);
  });

  it('with flow email_add_phone refuses a phone taken since the code went out', async () => {
    const fakes = fakeEffects({ searchUserByPhone: () => anna });
    const pending = claims('pending', 62, 'email_add_phone', {
      uid: 'uid-carla',
      email: 'carla@example.com',
      phone: PHONE,
    });
    const result = await request(
      fakes,
      'verifyOtp',
      { flow: 'email_add_phone', phone: PHONE, otp_code: CODE },
      { claims: pending },
    );
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'phone_taken' } });
    expect(fakes.names()).toEqual(['verifyOtp', 'searchUserByPhone']);
  });
});

describe('FeRegister', () => {
  it('phase email_otp with a phone_proof sends the email code and answers 23 with a pending_proof', async () => {
    const fakes = fakeEffects();
    const phoneProof = claims('phone', 24, 'phone_register', { phone: PHONE });
    const result = await request(
      fakes,
      'register',
      { phase: 'email_otp', email: 'New@Example.com', phone: PHONE, otp: true },
      { claims: phoneProof },
    );
    expect(fakes.calls).toEqual([['sendOtp', { key: 'new@example.com', email: 'new@example.com' }]]);
    expect(result.output).toMatchObject({ ok: true, nextStep: 23, flow: 'phone_register', otp: SENT });
    expect(result.output.proof).toEqual({
      field: 'pending_proof',
      claims: { kind: 'pending', flow: 'phone_register', step: 23, phone: PHONE, email: 'new@example.com' },
    });
  });

  it('phase email_otp without a proof starts an email registration at 23', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'register', { phase: 'email_otp', email: 'dario@example.com', otp: true });
    expect(result.output).toMatchObject({ ok: true, nextStep: 23, flow: 'email_register' });
    expect(result.output.proof?.claims).toEqual({
      kind: 'pending',
      flow: 'email_register',
      step: 23,
      email: 'dario@example.com',
    });
  });

  it('phase email_otp refuses a phone_proof for another phone (invalid_proof)', async () => {
    const fakes = fakeEffects();
    const phoneProof = claims('phone', 24, 'phone_register', { phone: PHONE });
    const result = await request(
      fakes,
      'register',
      { phase: 'email_otp', email: 'new@example.com', phone: NEW_PHONE },
      { claims: phoneProof },
    );
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'invalid_proof', data: { field: 'phone' } } });
    expect(fakes.calls).toEqual([]);
  });

  it('phase register registers, confirms DOI (36), updates (40 and 42), issues the token and ingests: 90', async () => {
    const fakes = fakeEffects();
    const registerProof = claims('register', 25, 'phone_register', { phone: PHONE, email: 'new@example.com' });
    const body = {
      phase: 'register',
      email: 'new@example.com',
      phone: PHONE,
      first_name: 'Nina',
      last_name: 'Neri',
      city: 'Roma',
      birth_date: '1990-01-31',
      consents: { terms_conditions: true },
    };
    const result = await request(fakes, 'register', body, { claims: registerProof });
    expect(result.steps).toEqual([36, 40, 42, 90]);
    expect(fakes.calls).toEqual([
      ['searchUserByPhone', { phone: PHONE, account: 'new@example.com' }],
      ['registerUser', { email: 'new@example.com', consents: { terms_conditions: true } }],
      ['confirmDoi', { uid: 'uid-new' }],
      ['updateProfile', { uid: 'uid-new', step: 40, fields: { first_name: 'Nina', last_name: 'Neri' } }],
      [
        'updateProfile',
        { uid: 'uid-new', step: 42, fields: { city: 'Roma', birth_date: '1990-01-31', otp_phone: PHONE } },
      ],
      ['issueToken', { uid: 'uid-new', stay_logged_in: true }],
      ['ingestLogin', { uid: 'uid-new', accessToken: 'token-1' }],
    ]);
    expect(result.output).toMatchObject({ ok: true, nextStep: 90, accessToken: 'token-1', uid: 'uid-new' });
  });

  it('phase register after an email-only verification never saves the phone the request merely names', async () => {
    const fakes = fakeEffects();
    const registerProof = claims('register', 37, 'email_register', { email: 'new@example.com' });
    const result = await request(
      fakes,
      'register',
      { phase: 'register', email: 'new@example.com', phone: PHONE, first_name: 'Nina' },
      { claims: registerProof },
    );
    expect(fakes.names()).toEqual(['registerUser', 'confirmDoi', 'updateProfile', 'issueToken', 'ingestLogin']);
    expect(fakes.effects.updateProfile).toHaveBeenCalledWith(
      { uid: 'uid-new', step: 40, fields: { first_name: 'Nina' } },
      expect.anything(),
    );
    expect(result.output).toMatchObject({ ok: true, nextStep: 90, flow: 'email_register_phone' });
    expect(result.output.proof?.claims.phone).toBeUndefined();
  });

  it('phase register refuses a register_proof for another email (invalid_proof)', async () => {
    const fakes = fakeEffects();
    const registerProof = claims('register', 37, 'email_register', { email: 'new@example.com' });
    const result = await request(
      fakes,
      'register',
      { phase: 'register', email: 'victim@example.com' },
      { claims: registerProof },
    );
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'invalid_proof' } });
    expect(fakes.calls).toEqual([]);
  });

  it('phase register refuses a verified phone taken meanwhile before registering anyone', async () => {
    const fakes = fakeEffects({ searchUserByPhone: () => anna });
    const registerProof = claims('register', 25, 'phone_register', { phone: PHONE, email: 'new@example.com' });
    const result = await request(
      fakes,
      'register',
      { phase: 'register', email: 'new@example.com' },
      { claims: registerProof },
    );
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'phone_taken' } });
    expect(fakes.names()).toEqual(['searchUserByPhone']);
  });
});

describe('FeAddPhone', () => {
  const afterEmail = claims('verified', 61, 'email_add_phone', { uid: 'uid-carla', email: 'carla@example.com' });

  it('sends a code to a free phone: 62, screen otp_phone, otp object and a pending_proof', async () => {
    const fakes = fakeEffects();
    const result = await request(
      fakes,
      'addPhone',
      { flow: 'email_add_phone', phone: NEW_PHONE, uid: 'uid-carla', email: 'carla@example.com' },
      { claims: afterEmail },
    );
    expect(fakes.calls).toEqual([
      ['searchUserByPhone', { phone: NEW_PHONE, account: 'uid-carla' }],
      ['sendOtp', { key: NEW_PHONE, phone: NEW_PHONE }],
    ]);
    expect(result.output).toMatchObject({
      ok: true,
      nextStep: 62,
      screen: 'otp_phone',
      otp: SENT,
      flow: 'email_add_phone',
    });
    expect(result.output.proof).toEqual({
      field: 'pending_proof',
      claims: {
        kind: 'pending',
        flow: 'email_add_phone',
        step: 62,
        uid: 'uid-carla',
        email: 'carla@example.com',
        phone: NEW_PHONE,
      },
    });
  });

  it('refuses a phone another account holds (phone_taken) without sending a code', async () => {
    const fakes = fakeEffects({ searchUserByPhone: () => anna });
    const result = await request(
      fakes,
      'addPhone',
      { flow: 'email_add_phone', phone: PHONE, uid: 'uid-carla' },
      { claims: afterEmail },
    );
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'phone_taken' } });
    expect(fakes.names()).toEqual(['searchUserByPhone']);
  });

  it('refuses a proof of another account (invalid_proof)', async () => {
    const fakes = fakeEffects();
    const result = await request(
      fakes,
      'addPhone',
      { flow: 'email_add_phone', phone: NEW_PHONE, uid: 'uid-anna' },
      { claims: afterEmail },
    );
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'invalid_proof', data: { field: 'uid' } } });
  });

  it('refuses a request without a proof (proof_required)', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'addPhone', { flow: 'email_add_phone', phone: NEW_PHONE, uid: 'uid-carla' });
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'proof_required' } });
  });

  it('serves a trusted caller without a proof', async () => {
    const fakes = fakeEffects();
    const result = await request(
      fakes,
      'addPhone',
      { flow: 'email_register_phone', phone: NEW_PHONE, uid: 'uid-carla' },
      { trusted: true },
    );
    expect(result.output).toMatchObject({ ok: true, nextStep: 62, flow: 'email_register_phone' });
  });
});

describe('FeUpdateProfile', () => {
  const loggedIn = claims('verified', 90, 'email_add_phone', {
    uid: 'uid-carla',
    email: 'carla@example.com',
    phone: NEW_PHONE,
  });

  it('checks otp_phone against other uids, saves, issues the token and answers 90 done with screen success', async () => {
    const fakes = fakeEffects();
    const result = await request(
      fakes,
      'updateProfile',
      { uid: 'uid-carla', first_name: 'Carla', city: 'Milano', otp_phone: NEW_PHONE },
      { claims: loggedIn },
    );
    expect(fakes.calls).toEqual([
      ['searchUserByPhone', { phone: NEW_PHONE, account: 'uid-carla' }],
      ['updateProfile', { uid: 'uid-carla', step: 40, fields: { first_name: 'Carla' } }],
      ['updateProfile', { uid: 'uid-carla', step: 42, fields: { city: 'Milano', otp_phone: NEW_PHONE } }],
      ['issueToken', { uid: 'uid-carla', stay_logged_in: true }],
      ['ingestLogin', { uid: 'uid-carla', accessToken: 'token-1' }],
    ]);
    expect(result.output).toMatchObject({
      ok: true,
      nextStep: 90,
      done: true,
      screen: 'success',
      accessToken: 'token-1',
    });
  });

  it('refuses an otp_phone another uid holds (phone_taken) and saves nothing', async () => {
    const fakes = fakeEffects({ searchUserByPhone: () => ({ ...anna, phone: NEW_PHONE }) });
    const result = await request(
      fakes,
      'updateProfile',
      { uid: 'uid-carla', city: 'Milano', otp_phone: NEW_PHONE },
      { claims: loggedIn },
    );
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'phone_taken' } });
    expect(fakes.names()).toEqual(['searchUserByPhone']);
  });

  it('refuses an otp_phone the proof does not vouch for (phone_not_verified)', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'updateProfile', { uid: 'uid-carla', otp_phone: PHONE }, { claims: loggedIn });
    expect(result.output).toMatchObject({
      ok: false,
      failure: { reason: 'phone_not_verified', data: { field: 'otp_phone' } },
    });
    expect(fakes.calls).toEqual([]);
  });

  it('refuses to act on another uid (invalid_proof)', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'updateProfile', { uid: 'uid-anna', city: 'Roma' }, { claims: loggedIn });
    expect(result.output).toMatchObject({ ok: false, failure: { reason: 'invalid_proof', data: { field: 'uid' } } });
    expect(fakes.calls).toEqual([]);
  });

  it('lets a trusted caller save any free otp_phone', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'updateProfile', { uid: 'uid-zoe', otp_phone: PHONE }, { trusted: true });
    expect(fakes.names()).toEqual(['searchUserByPhone', 'updateProfile', 'issueToken', 'ingestLogin']);
    expect(result.output).toMatchObject({ ok: true, nextStep: 90, uid: 'uid-zoe' });
  });
});
