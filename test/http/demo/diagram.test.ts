import { frontendSteps, journeyDiagrams, LABELS, screenTitle } from '../../../machines';
import { demoDiagram, type DemoDiagram } from '../../../src/http/demo/diagram';

/* The page's step panel is the journey diagrams' (GET /flows): same journeys, same Italian words, each step once. */

let diagram: DemoDiagram;
beforeAll(async () => {
  diagram = await demoDiagram();
});

describe('demo step panel', () => {
  it('names the journeys as the diagrams do', async () => {
    const journeys = await journeyDiagrams();
    expect(diagram.journeys.map((j) => [j.id, j.title])).toEqual(journeys.map((j) => [j.id, j.title]));
    for (const j of diagram.journeys) expect(j.title).toBe(LABELS.journeys[j.id]);
  });

  it('lists every screen once, in the diagrams’ words, the start screens first and then by step', () => {
    const ids = diagram.screens.map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    const steps = diagram.screens.map((s) => s.step).filter((s) => s !== null);
    expect(new Set(steps).size).toBe(steps.length);
    expect(diagram.screens.map((s) => s.step)).toEqual([
      null,
      null,
      '14',
      '23',
      '24',
      '25',
      '33',
      '37',
      '60',
      '61',
      '62',
      '65',
      '90',
      // The passkey enrolment's screens after 90, outside the contract's numbers.
      '102',
      '103',
    ]);
    for (const screen of diagram.screens) expect(screen.title).toBe(screenTitle(screen.id, screen.step));
    expect(diagram.screens.find((s) => s.id === 'awaitingPhoneCode')).toMatchObject({
      title: '14 · Inserisci il codice SMS',
      journeys: ['phone-login', 'phone-registration', 'passkey-enrol'],
    });
  });

  it('has a screen for every next_step the page shows', () => {
    for (const step of frontendSteps().map(String)) {
      expect({ step, screens: diagram.screens.filter((s) => s.step === step).length }).toEqual({ step, screens: 1 });
    }
  });

  it('carries the user actions between screens in Italian, with the service’s calls as notes', () => {
    expect(diagram.actions).toContainEqual({
      from: 'awaitingPhoneCode',
      to: 'loggedIn',
      label: 'invia il codice',
      action: 'FeVerifyOtp',
      notes: [
        'verifica il codice SMS',
        "cerca l'utente per telefono",
        'emette il token di accesso',
        "segnala l'accesso al collector",
      ],
      journeys: ['phone-login', 'passkey-enrol'],
    });
    const known = new Set(diagram.screens.map((s) => s.id));
    for (const a of diagram.actions) expect([known.has(a.from), known.has(a.to)]).toEqual([true, true]);
  });

  it('starts FeLogin and a proofless FeRegister where the resume table does', () => {
    expect(diagram.start).toEqual({ login: 'enteringIdentifier', register: 'enteringRegistrationEmail' });
  });
});
