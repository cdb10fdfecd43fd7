import type { Challenge } from 'altcha-lib';
import { solvePow } from '../../test/support/challenge';

/*
 * The soak's proof-of-work solver (scripts/soak/solver.ts), a process of its own: it solves one
 * challenge at a time as the page's widget does (ALTCHA's own solver) and answers the payload
 * with the CPU the solution cost, user and system, which this otherwise idle process measures
 * exactly. It exits when the soak's IPC channel closes.
 */

process.on('disconnect', () => process.exit(0));
process.on('message', (challenge: Challenge) => {
  const before = process.cpuUsage();
  solvePow(challenge).then(
    (payload) => {
      const used = process.cpuUsage(before);
      process.send!({ payload, cpuMs: (used.user + used.system) / 1000 });
    },
    (err: Error) => process.send!({ error: err.message }),
  );
});
