import { EVENT_ACTION, type UserEventType } from '../../machines/actions';
import { edgesOf, guardLabel, stateNodes } from '../../machines/diagrams/diagram';
import {
  frontendSteps,
  journeyDiagrams,
  renderJourneyMermaid,
  type JourneyDiagram,
} from '../../machines/diagrams/journey-diagrams';
import { JOURNEY_IDS, journeys } from '../../machines/diagrams/journeys';
import { actionLabel, isScreenLabel, LABELS, stateLabel } from '../../machines/diagrams/labels';
import { loginFlowMachine } from '../../machines/login-flow.machine';

/*
 * The journey diagrams product and QA read (docs/journeys.md, GET /flows): small, free of
 * refusals and guards, every state named in plain words, and together covering every step the
 * frontend is ever sent to.
 */

const MAX_STATES = 15;
let diagrams: JourneyDiagram[];
beforeAll(async () => {
  diagrams = await journeyDiagrams();
});

const nodeLines = (source: string) => source.split('\n').filter((line) => /^ {2}\w+(\(\[|\(|>)"/.test(line));
const guardNames = [
  ...new Set(
    edgesOf(loginFlowMachine)
      .map((e) => guardLabel(e.guard)?.replace(/\(.*$/, ''))
      .filter((g): g is string => g !== undefined),
  ),
];

describe('journey diagrams', () => {
  it('draws one diagram per journey of machines/diagrams/journeys.ts, with a title in labels.ts', () => {
    expect(diagrams.map((d) => d.id)).toEqual(journeys.map((j) => j.id));
    expect([...JOURNEY_IDS].sort()).toEqual(Object.keys(LABELS.journeys).sort());
    for (const d of diagrams) expect(d.title).toBe(LABELS.journeys[d.id]);
  });

  it.each(JOURNEY_IDS.map((id) => [id]))('%s holds at most 15 states, screens and notes together', (id) => {
    const diagram = diagrams.find((d) => d.id === id)!;
    expect(diagram.screens.length).toBeLessThanOrEqual(MAX_STATES);
    const nodes = nodeLines(renderJourneyMermaid(diagram));
    expect(nodes.length).toBe(diagram.screens.length + diagram.actions.filter((a) => a.notes.length > 0).length);
    expect(nodes.length).toBeLessThanOrEqual(MAX_STATES);
  });

  it.each(JOURNEY_IDS.map((id) => [id]))('%s has no refusal edge and no guard syntax', (id) => {
    const diagram = diagrams.find((d) => d.id === id)!;
    const source = renderJourneyMermaid(diagram);
    expect(diagram.screens.map((s) => s.state)).not.toContain('refused');
    expect(diagram.actions.map((a) => a.to)).not.toContain('refused');
    expect(source).not.toMatch(/refused|\[else\]|\bdone\b|xstate\.|\[\*\]/);
    for (const guard of guardNames) expect({ guard, found: source.includes(guard) }).toEqual({ guard, found: false });
    // Arrows carry the user's action only: plain Italian words, no event names.
    for (const action of diagram.actions) expect(action.label).not.toMatch(/[A-Z_]{4,}|[[\]()]/);
  });

  it.each(JOURNEY_IDS.map((id) => [id]))(
    '%s names every state it shows or passes in plain words, screens with their step',
    (id) => {
      const diagram = diagrams.find((d) => d.id === id)!;
      const source = renderJourneyMermaid(diagram);
      for (const screen of diagram.screens) {
        const label = stateLabel(screen.state);
        expect(label && isScreenLabel(label)).toBe(true);
        expect(screen.title).toBe(screen.step === null ? screen.name : `${screen.step} · ${screen.name}`);
        expect(source).toContain(`"${screen.title}"`);
      }
      for (const state of diagram.actions.flatMap((a) => a.passed))
        expect({ state, label: stateLabel(state) }).toEqual({ state, label: { note: expect.any(String) } });
      for (const action of diagram.actions) for (const note of action.notes) expect(source).toContain(note);
    },
  );

  it('gives every state of the machine one plain label: a screen where requests settle, a note where they pass', () => {
    const leaves = stateNodes(loginFlowMachine.root).filter((n) => Object.keys(n.states).length === 0);
    expect(leaves.map((n) => n.key).sort()).toEqual(Object.keys(LABELS.states).sort());
    for (const node of leaves) {
      expect({ state: node.key, screen: isScreenLabel(stateLabel(node.key)!) }).toEqual({
        state: node.key,
        screen: node.tags.includes('settled'),
      });
    }
  });

  it('names the user action of every transition a user event takes, refusals aside', () => {
    for (const edge of edgesOf(loginFlowMachine)) {
      if (!(edge.eventType in EVENT_ACTION) || edge.target.key === 'refused') continue;
      const into = edge.target.key;
      expect({ event: edge.eventType, into, label: actionLabel(edge.eventType as UserEventType, into) }).toEqual({
        event: edge.eventType,
        into,
        label: expect.any(String),
      });
    }
  });

  it('covers, across the journeys, every step the frontend is sent to', () => {
    const shown = new Set(diagrams.flatMap((d) => d.screens.map((s) => s.step)).filter((s) => s !== null));
    const sent = frontendSteps();
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((step) => !shown.has(step))).toEqual([]);
    // The contract's, and the passkey enrolment's two screens after 90 (102, 103), drawn by its journey.
    expect(sent.map(String).sort()).toEqual([
      '102',
      '103',
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
    ]);
  });

  it('draws the phone login as the seeded user lives it: 14, then 90, the SMS and the lookup as notes', () => {
    const phone = diagrams.find((d) => d.id === 'phone-login')!;
    expect(phone.screens.map((s) => s.title)).toEqual([
      'Accedi o registrati',
      '14 · Inserisci il codice SMS',
      '90 · Accesso effettuato',
    ]);
    expect(phone.actions.map((a) => [a.label, a.notes])).toEqual([
      ['inserisce il telefono', ['invia SMS']],
      [
        'invia il codice',
        [
          'verifica il codice SMS',
          "cerca l'utente per telefono",
          'emette il token di accesso',
          "segnala l'accesso al collector",
        ],
      ],
    ]);
  });

  it('lists the refusals of each request instead of drawing them: a wrong code at 14', () => {
    const phone = diagrams.find((d) => d.id === 'phone-login')!;
    expect(phone.refusals).toContainEqual({
      at: 'awaitingPhoneCode',
      action: 'FeVerifyOtp',
      reason: 'invalid',
      mistake: 'codice sbagliato',
    });
    expect(phone.refusals).toContainEqual({
      at: 'enteringIdentifier',
      action: 'FeLogin',
      reason: 'invalid_request',
      field: 'identifier',
      mistake: LABELS.refusals['invalid_request:identifier'],
    });
    const addPhone = diagrams.find((d) => d.id === 'email-login-add-phone')!;
    expect(addPhone.refusals.filter((r) => r.reason === 'phone_taken').map((r) => r.at)).toEqual([
      'askingPhone',
      'awaitingNewPhoneCode',
    ]);
  });

  it('keeps a revisited screen once: the email registration comes back to 90 after the phone and the profile', () => {
    const registration = diagrams.find((d) => d.id === 'email-registration')!;
    expect(registration.screens.filter((s) => s.step === 90)).toHaveLength(1);
    expect(registration.actions.filter((a) => a.to === 'loggedIn').map((a) => a.label)).toEqual([
      'invia il modulo',
      'invia il codice',
      'salva il profilo',
    ]);
  });
});
