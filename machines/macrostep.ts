import {
  createActor,
  type AnyActorRef,
  type AnyActorScope,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventObject,
} from 'xstate';

/*
 * One macrostep of a machine without a live actor: the snapshots of its microsteps and the
 * children it spawns, which the caller runs itself (run-step.ts). XState's own pure functions
 * (`getMicrosteps`, `transition`) do the same, but each call builds a throwaway actor of the
 * whole machine for its scope (`createInertActorScope`, internal): measured at about 25 of the
 * 40 µs a login's first macrostep costs. Here that actor is built once per machine and never
 * started.
 *
 * Beyond XState's documented API (createActor, transition, getMicrosteps) this relies on:
 * - a hand-built actor scope (`ActorScope`: self, system, logger, defer, emit, stopChild,
 *   actionExecutor), a type XState exports but does not document for callers to build;
 * - `machine.microstep(snapshot, event, scope)`, a method of the machine, not a documented function;
 * - that spawns reach the scope's `actionExecutor` as `xstate.spawnChild` actions with
 *   `{ id, src, input, actorRef }` params (what `transition()` returns, undocumented in shape);
 * - and, in run-step.ts, the `xstate.done.actor.<id>` / `xstate.error.actor.<id>` events it
 *   synthesises to feed an effect's answer back, as XState would for an invoked actor.
 * So package.json pins XState to one exact version (test/project/xstate-pin.test.ts), and
 * test/machines/macrostep.test.ts compares this with `getMicrosteps` over whole journeys: an
 * upgrade that changes any of it fails there first. What would replace it: XState's own
 * `getMicrosteps` (documented; the spawn actions come back with each microstep) for this file, at
 * the cost of the throwaway actor per call; and for the done events, a live actor per request
 * (`createActor(machine, { snapshot }).start()`, effects provided as `fromPromise` actors, awaited
 * with `waitFor`), at the cost of an actor and its timers per request.
 */

/** A child the macrostep spawned (an invoked effect): XState would start it now; the caller runs it instead. */
export interface Spawned {
  /** Its key in `snapshot.children` (the invoke's id). */
  id: string;
  /** The actor it was given by name (the invoke's `src`), else its id. */
  src: string;
  input: unknown;
  /** The child as it stands in `snapshot.children` (never started): gone from there once the state that invoked it is left. */
  ref: AnyActorRef;
}

export interface Macrostep {
  /** The snapshot after each microstep, in order: the last is where the machine rests. */
  microsteps: AnyMachineSnapshot[];
  spawned: Spawned[];
}

interface SpawnAction {
  type: string;
  params?: { id?: unknown; src?: unknown; input?: unknown; actorRef?: AnyActorRef };
}

const SPAWN = 'xstate.spawnChild';
const noop = () => {};
const scopes = new WeakMap<AnyStateMachine, Omit<AnyActorScope, 'actionExecutor'>>();

/** The inert scope of a machine: its `self` is an actor of the machine that never starts, so nothing a transition names is executed. */
function scopeOf(machine: AnyStateMachine): Omit<AnyActorScope, 'actionExecutor'> {
  let scope = scopes.get(machine);
  if (!scope) {
    const self = createActor(machine);
    scope = {
      self,
      system: self.system,
      id: '',
      sessionId: '',
      logger: noop,
      defer: noop,
      emit: noop,
      stopChild: noop,
    };
    scopes.set(machine, scope);
  }
  return scope;
}

/**
 * The macrostep `event` causes from `snapshot`: pure, synchronous, throws what a guard or an
 * action throws. A scope object per call (cheap: the actor in it is shared), as XState's
 * microstep swaps the scope's `actionExecutor` while it runs.
 */
export function macrostep(machine: AnyStateMachine, snapshot: AnyMachineSnapshot, event: EventObject): Macrostep {
  const spawned: Spawned[] = [];
  const actionExecutor = (action: SpawnAction) => {
    const params = action.params;
    if (action.type !== SPAWN || !params?.actorRef) return;
    const ref = params.actorRef;
    spawned.push({ id: ref.id, src: typeof params.src === 'string' ? params.src : ref.id, input: params.input, ref });
  };
  const microsteps = machine.microstep(snapshot, event, {
    ...scopeOf(machine),
    actionExecutor,
  } as AnyActorScope) as AnyMachineSnapshot[];
  return { microsteps, spawned };
}
