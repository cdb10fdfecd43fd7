import { createActor, type AnyActorRef, type AnyActorScope, type AnyMachineSnapshot, type AnyStateMachine, type EventObject } from 'xstate';

/*
 * One macrostep of a machine without a live actor: the snapshots of its microsteps and the
 * children it spawns, which the caller runs itself (run-step.ts). XState's own pure functions
 * (`getMicrosteps`, `transition`) do the same, but each call builds a throwaway actor of the
 * whole machine for its scope (`createInertActorScope`, internal): measured at about 25 of the
 * 40 µs a login's first macrostep costs. Here that actor is built once per machine and never
 * started; everything else is public API: `machine.microstep(snapshot, event, scope)`, the
 * `ActorScope` shape, and the spawn actions handed to the scope's `actionExecutor`, which are
 * what `transition()` returns (`xstate.spawnChild` with `{ id, src, input, actorRef }`).
 * test/machines/macrostep.test.ts compares this with `getMicrosteps` and fails if XState changes it.
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
    scope = { self, system: self.system, id: '', sessionId: '', logger: noop, defer: noop, emit: noop, stopChild: noop };
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
  const microsteps = machine.microstep(snapshot, event, { ...scopeOf(machine), actionExecutor } as AnyActorScope) as AnyMachineSnapshot[];
  return { microsteps, spawned };
}
