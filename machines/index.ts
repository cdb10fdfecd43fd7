/*
 * The login journey: one machine, its step numbers and effects, the recipe that turns a request
 * into its input and event, the runner of one request, the diagrams and the replayed journeys.
 * Imports nothing from src/.
 */
export * from './steps';
export * from './effects';
export * from './login-flow.machine';
export * from './requests';
export * from './run-step';
export { edgesOf, guardLabel, reachedBy, renderMermaid, stateNodes, stepTable, type Edge, type MermaidOptions, type StepRow } from './diagram';
export { journeys, replayJourney, worldEffects, type Journey, type ReplayedRequest } from './journeys';
