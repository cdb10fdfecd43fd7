import { ACTIONS, FE_ACTIONS, MACHINE_ACTIONS } from '../../machines/actions';
import { stepTable } from '../../machines/diagrams/diagram';
import { journeyDiagrams } from '../../machines/diagrams/journey-diagrams';
import { loginFlowMachine } from '../../machines/login-flow.machine';
import { resumePointFor } from '../../machines/resume';
import { PASSKEY_STEP, STEP, stepOfTag } from '../../machines/steps';
import { claims, fakeEffects, PHONE, request } from './login-flow.fakes';

// The login by passkey as a path of the login machine (docs/passkeys.md, docs/flows-design.md):
// from the login screen through 101 to the 90 every login shares, outside the contract's numbers.

const LOGIN = { passkey_proof: 'pk-proof', credential: { id: 'cred-anna', type: 'public-key' } };

describe('login by passkey', () => {
  it('passes 101 and ends at 90: the assertion verified, the token issued, the ingest queued, no code', async () => {
    const fakes = fakeEffects({ verifyPasskey: () => ({ uid: 'uid-anna' }) });
    const result = await request(fakes, 'passkeyLogin', LOGIN);
    expect(result.from).toBe('enteringIdentifier');
    expect(result.steps).toEqual([101, 90]);
    expect(result.states).toEqual(['verifyingPasskey', 'issuingToken', 'ingestingLogin', 'loggedIn']);
    expect(fakes.calls).toEqual([
      ['verifyPasskey', LOGIN],
      ['issueToken', { uid: 'uid-anna', stay_logged_in: false, method: 'passkey' }],
      ['ingestLogin', { uid: 'uid-anna', accessToken: 'token-1', method: 'passkey' }],
    ]);
    expect(result.output).toMatchObject({
      ok: true,
      nextStep: 90,
      flow: null,
      screen: 'success',
      done: true,
      uid: 'uid-anna',
      accessToken: 'token-1',
    });
  });

  it('hands out the verified proof of 90 a passkey login always did: the uid alone, method passkey, nothing linked', async () => {
    const result = await request(fakeEffects({ verifyPasskey: () => ({ uid: 'uid-anna' }) }), 'passkeyLogin', LOGIN);
    expect(result.output.proof).toEqual({
      field: 'proof',
      claims: { kind: 'verified', flow: undefined, step: 90, uid: 'uid-anna', method: 'passkey' },
    });
  });

  it('stays logged in only when asked', async () => {
    const fakes = fakeEffects();
    await request(fakes, 'passkeyLogin', { ...LOGIN, stay_logged_in: true });
    expect(fakes.calls.find(([name]) => name === 'issueToken')?.[1]).toMatchObject({ stay_logged_in: true });
  });

  it("fails with the effect's own refusal, before any token", async () => {
    const unknown = Object.assign(new Error('unknown passkey'), { reason: 'passkey_unknown' });
    const fakes = fakeEffects({
      verifyPasskey: () => {
        throw unknown;
      },
    });
    await expect(request(fakes, 'passkeyLogin', LOGIN)).rejects.toBe(unknown);
    expect(fakes.names()).toEqual(['verifyPasskey']);
  });

  it('logs in even when the ingest fails, as every login', async () => {
    const fakes = fakeEffects({
      ingestLogin: () => {
        throw new Error('collector down');
      },
    });
    const result = await request(fakes, 'passkeyLogin', LOGIN);
    expect(result.output).toMatchObject({ ok: true, nextStep: 90, uid: 'uid-passkey' });
  });

  it("leaves a code login's effects as they were: no method named", async () => {
    const fakes = fakeEffects({ searchUserByPhone: () => ({ found: true, uid: 'uid-anna', phone: PHONE }) });
    const result = await request(
      fakes,
      'verifyOtp',
      { flow: 'phone', phone: PHONE, otp_code: '123456' },
      { claims: undefined },
    );
    expect(result.output.nextStep).toBe(90);
    expect(fakes.calls.find(([name]) => name === 'issueToken')?.[1]).toEqual({ uid: 'uid-anna', stay_logged_in: true });
    expect(fakes.calls.find(([name]) => name === 'ingestLogin')?.[1]).toEqual({
      uid: 'uid-anna',
      accessToken: 'token-1',
    });
    expect(result.output.proof?.claims).not.toHaveProperty('method');
  });

  it("continues as a code login's journey: its proof of 90 resumes FeAddPhone and FeUpdateProfile", async () => {
    const first = await request(fakeEffects({ verifyPasskey: () => ({ uid: 'uid-anna' }) }), 'passkeyLogin', LOGIN);
    const proof = first.output.proof!.claims;
    const added = await request(fakeEffects(), 'addPhone', { phone: PHONE }, { claims: proof });
    expect(added.output).toMatchObject({ ok: true, nextStep: 62 });
    const saved = await request(fakeEffects(), 'updateProfile', { uid: 'uid-anna', city: 'Roma' }, { claims: proof });
    expect(saved.output).toMatchObject({ ok: true, nextStep: 90, done: true });
    // Another uid than the passkey's is another person's request.
    const other = await request(fakeEffects(), 'updateProfile', { uid: 'uid-other' }, { claims: proof });
    expect(other.output.failure).toMatchObject({ reason: 'invalid_proof' });
  });

  it('resumes only at the login screen, whatever proof or flow the request carries', () => {
    expect(resumePointFor({ entry: 'passkeyLogin' })?.state).toBe('enteringIdentifier');
    expect(
      resumePointFor({ entry: 'passkeyLogin', flow: 'phone', claims: claims('verified', 90, 'phone', { uid: 'u' }) })
        ?.state,
    ).toBe('enteringIdentifier');
  });
});

describe('the passkey step, outside the contract', () => {
  it('numbers 101 apart from the contract: the contract keeps its steps and actions', () => {
    expect(Object.values(STEP)).not.toContain(PASSKEY_STEP.passkeyAsserting);
    expect(stepOfTag('step:101')).toBe(101);
    expect(FE_ACTIONS).not.toContain('PasskeyLogin');
    expect(MACHINE_ACTIONS).toEqual([...FE_ACTIONS, 'PasskeyLogin', 'PasskeyEnrolOptions', 'PasskeyEnrol']);
    expect(ACTIONS.PasskeyLogin).toEqual({ entry: 'passkeyLogin', event: 'PASSKEY_LOGIN', proofField: null });
  });

  it('has its own step table: 101 on verifyingPasskey, reached by PasskeyLogin; the contract table has no 101', () => {
    expect(stepTable(loginFlowMachine, 'passkeys')[0]).toEqual(
      expect.objectContaining({ step: 101, states: ['verifyingPasskey'], settles: false, reachedBy: ['PasskeyLogin'] }),
    );
    expect(stepTable(loginFlowMachine).map((row) => row.step)).not.toContain(101);
  });

  it('draws the passkey journey: the login screen, the passkey chosen, what the service did, 90', async () => {
    const diagram = (await journeyDiagrams()).find((d) => d.id === 'passkey-login')!;
    expect(diagram.screens.map((s) => s.title)).toEqual(['Accedi o registrati', '90 · Accesso effettuato']);
    expect(diagram.actions).toEqual([
      expect.objectContaining({
        from: 'enteringIdentifier',
        to: 'loggedIn',
        action: 'PasskeyLogin',
        label: 'sceglie la sua passkey',
        notes: ['verifica la passkey (nessun codice)', 'emette il token di accesso', "segnala l'accesso al collector"],
      }),
    ]);
  });
});
