/*
 * The login journey: one machine, its step numbers, actions and effects, the recipe that turns a
 * request into its input and event, the table of where each request resumes, the runner of one
 * request; and apart, in diagrams/, the diagrams, the replayed journeys, their diagrams for
 * product and QA and the plain Italian labels they use. Imports nothing from src/.
 */
export * from './steps';
export * from './actions';
export * from './effects';
export * from './login-flow.machine';
export * from './requests';
export * from './resume';
export * from './run-step';
export { stateNodes } from './diagrams/diagram';
export { EXAMPLE_JOURNEY_IDS, JOURNEY_IDS, type JourneyId } from './diagrams/journeys';
export * from './diagrams/labels';
export * from './diagrams/journey-diagrams';
