import { ACTIONS, FE_ACTIONS } from '../../machines/actions';
import { stepTable } from '../../machines/diagrams/diagram';
import { journeyDiagrams } from '../../machines/diagrams/journey-diagrams';
import { initialContext, loginFlowMachine } from '../../machines/login-flow.machine';
import { resumePointFor } from '../../machines/resume';
import { PASSKEY_STEP, STEP, stepOfTag } from '../../machines/steps';
import { flowRequest } from '../../machines/requests';
import { claims, fakeEffects, PHONE, request } from './login-flow.fakes';

// Enrolling a passkey as a path of the login machine after 90 (docs/passkeys.md, docs/flows-design.md):
// the options (102), then the passkey verified and kept (103), both with the login proof of 90.

const ANNA = { uid: 'uid-anna', email: 'anna@example.com' };
/** The `verified` proof a login answers at 90, with its id: the ceremonies bind their challenge to it. */
const LOGIN_PROOF = { ...claims('verified', STEP.loggedIn, 'phone', { ...ANNA, phone: PHONE }), jti: 'login-jti' };
const ENROL = { passkey_proof: 'enrol-proof-1', credential: { id: 'cred-new', type: 'public-key' }, name: 'Telefono' };

describe('enrolling a passkey', () => {
  it('issues the options from 90 and settles at 102, for the account and login proof of 90 alone', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'passkeyEnrolOptions', {}, { claims: LOGIN_PROOF });
    expect(result.from).toBe('loggedIn');
    expect(result.steps).toEqual([102]);
    expect(result.states).toEqual(['offeringPasskey', 'passkeyOffered']);
    expect(fakes.calls).toEqual([
      ['passkeyEnrolOptions', { uid: ANNA.uid, login: 'login-jti', email: ANNA.email, phone: PHONE }],
    ]);
    expect(result.output).toMatchObject({
      ok: true,
      nextStep: 102,
      done: false,
      uid: ANNA.uid,
      ceremony: { options: { challenge: 'challenge-1' }, passkey_proof: 'enrol-proof-1' },
    });
    // Nothing to carry to the next request: PasskeyEnrol presents the same login proof, no token is issued.
    expect(result.output).not.toHaveProperty('proof');
    expect(result.output).not.toHaveProperty('accessToken');
  });

  it('verifies and keeps the passkey from 102 and settles at 103, not at 90 again', async () => {
    const fakes = fakeEffects();
    const result = await request(fakes, 'passkeyEnrol', ENROL, { claims: LOGIN_PROOF });
    expect(result.from).toBe('passkeyOffered');
    expect(result.steps).toEqual([103]);
    expect(result.states).toEqual(['enrollingPasskey', 'passkeyEnrolled']);
    expect(fakes.calls).toEqual([['enrolPasskey', { uid: ANNA.uid, login: 'login-jti', ...ENROL }]]);
    expect(result.output).toMatchObject({
      ok: true,
      nextStep: 103,
      ceremony: { passkey: { id: 'cred-new', name: 'Telefono' } },
    });
    expect(fakes.names()).not.toContain('issueToken');
  });

  it("fails with the effect's own refusal, and reaches neither 102 nor 103", async () => {
    const invalid = Object.assign(new Error('used'), { reason: 'passkey_challenge_invalid' });
    const fakes = fakeEffects({
      enrolPasskey: () => {
        throw invalid;
      },
      passkeyEnrolOptions: () => {
        throw invalid;
      },
    });
    await expect(request(fakes, 'passkeyEnrol', ENROL, { claims: LOGIN_PROOF })).rejects.toBe(invalid);
    await expect(request(fakes, 'passkeyEnrolOptions', {}, { claims: LOGIN_PROOF })).rejects.toBe(invalid);
    expect(fakes.names()).toEqual(['enrolPasskey', 'passkeyEnrolOptions']);
  });

  it.each([
    ['the add-phone screen (61)', claims('verified', STEP.addPhone, 'email', ANNA)],
    ['a code screen (62)', claims('pending', STEP.enterNewPhoneCode, 'email_add_phone', { ...ANNA, phone: PHONE })],
    ['the registration form (37)', claims('register', STEP.newUserForm, 'email', { email: ANNA.email })],
  ])('refuses a proof of another step: %s resumes no enrolment (invalid_proof)', async (_, proof) => {
    for (const [entry, body] of [
      ['passkeyEnrolOptions', {}],
      ['passkeyEnrol', ENROL],
    ] as const) {
      const fakes = fakeEffects();
      const result = await request(fakes, entry, body, { claims: proof });
      expect(result.from).toBe('refused');
      expect(result.output.failure).toEqual({ reason: 'invalid_proof' });
      expect(fakes.calls).toEqual([]);
    }
  });

  it('refuses an enrolment without a proof (proof_required), a trusted caller included: it is always the person’s own', async () => {
    for (const trusted of [false, true]) {
      const result = await request(fakeEffects(), 'passkeyEnrolOptions', {}, { trusted });
      expect(result.output.failure).toEqual({ reason: 'proof_required' });
    }
    const result = await request(fakeEffects(), 'passkeyEnrol', ENROL, {});
    expect(result.output.failure).toEqual({ reason: 'proof_required' });
  });

  it('resumes the options only at 90 and the passkey only at 102', () => {
    expect(resumePointFor({ entry: 'passkeyEnrolOptions', claims: LOGIN_PROOF })?.state).toBe('loggedIn');
    expect(resumePointFor({ entry: 'passkeyEnrol', claims: LOGIN_PROOF })?.state).toBe('passkeyOffered');
  });

  it("takes the identity primitives' login proof, which names no step, as the proof of 90", async () => {
    const primitives = { kind: 'verified', uid: ANNA.uid, email: ANNA.email, jti: 'primitive-jti' };
    const asked = await request(fakeEffects(), 'passkeyEnrolOptions', {}, { claims: primitives });
    expect(asked.output).toMatchObject({ ok: true, nextStep: 102, uid: ANNA.uid });
    const fakes = fakeEffects();
    const kept = await request(fakes, 'passkeyEnrol', ENROL, { claims: primitives });
    expect(kept.output).toMatchObject({ ok: true, nextStep: 103 });
    expect(fakes.calls[0]?.[1]).toMatchObject({ uid: ANNA.uid, login: 'primitive-jti' });
  });

  it('takes no enrolment from a state other than 90 (or 102 for the passkey itself)', () => {
    const options = flowRequest('passkeyEnrolOptions', {}).event;
    const enrol = flowRequest('passkeyEnrol', ENROL).event;
    // The machine resolved where a request would stand, as resume.ts resolves it: no event taken on the way.
    const at = (state: string) =>
      loginFlowMachine.resolveState({
        value: state === 'passkeyOffered' ? { passkeyEnrolment: state } : state,
        context: initialContext({ entry: 'passkeyEnrolOptions', claims: LOGIN_PROOF }),
      });
    for (const state of ['enteringIdentifier', 'askingPassword', 'passkeyOffered'])
      expect(at(state).can(options)).toBe(false);
    expect(at('loggedIn').can(options)).toBe(true);
    for (const state of ['enteringIdentifier', 'loggedIn']) expect(at(state).can(enrol)).toBe(false);
    expect(at('passkeyOffered').can(enrol)).toBe(true);
  });

  it('leaves the contract as it was: its actions, its steps', () => {
    expect(FE_ACTIONS).not.toContain('PasskeyEnrolOptions');
    expect(FE_ACTIONS).not.toContain('PasskeyEnrol');
    expect(Object.values(STEP)).not.toContain(PASSKEY_STEP.passkeyOffered);
    expect(Object.values(STEP)).not.toContain(PASSKEY_STEP.passkeyEnrolled);
    expect(stepOfTag('step:102')).toBe(102);
    expect(stepOfTag('step:103')).toBe(103);
    expect(ACTIONS.PasskeyEnrolOptions).toEqual({
      entry: 'passkeyEnrolOptions',
      event: 'PASSKEY_ENROL_OPTIONS',
      proofField: 'proof',
    });
    expect(ACTIONS.PasskeyEnrol).toEqual({ entry: 'passkeyEnrol', event: 'PASSKEY_ENROL', proofField: 'proof' });
  });

  it('lists 102 and 103 in the passkeys’ step table, each on the screen it settles on, none in the contract’s', () => {
    expect(stepTable(loginFlowMachine, 'passkeys').slice(1)).toEqual([
      expect.objectContaining({
        step: 102,
        states: ['passkeyOffered'],
        settles: true,
        reachedBy: ['PasskeyEnrolOptions'],
      }),
      expect.objectContaining({ step: 103, states: ['passkeyEnrolled'], settles: true, reachedBy: ['PasskeyEnrol'] }),
    ]);
    const contract = stepTable(loginFlowMachine).map((row) => row.step);
    expect(contract).not.toContain(102);
    expect(contract).not.toContain(103);
  });

  it('draws the enrolment journey: the phone login to 90, then 102 and 103', async () => {
    const diagram = (await journeyDiagrams()).find((d) => d.id === 'passkey-enrol')!;
    expect(diagram.screens.map((s) => s.title)).toEqual([
      'Accedi o registrati',
      '14 · Inserisci il codice SMS',
      '90 · Accesso effettuato',
      '102 · Crea la passkey',
      '103 · Passkey creata',
    ]);
    expect(diagram.actions.slice(-2)).toEqual([
      expect.objectContaining({
        from: 'loggedIn',
        to: 'passkeyOffered',
        action: 'PasskeyEnrolOptions',
        label: 'sceglie «Crea una passkey»',
        notes: ['prepara le opzioni della nuova passkey'],
      }),
      expect.objectContaining({
        from: 'passkeyOffered',
        to: 'passkeyEnrolled',
        action: 'PasskeyEnrol',
        label: 'crea la passkey sul dispositivo',
        notes: ['verifica e salva la nuova passkey'],
      }),
    ]);
  });
});
