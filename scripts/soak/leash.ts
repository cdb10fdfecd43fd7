/*
 * Preloaded into each service instance the soak starts (`node --import tsx --import leash.ts
 * src/server.ts`): the instance exits when the soak runner's IPC channel closes, so even a
 * runner killed with SIGKILL leaves no instance behind. The channel is unref'ed: it keeps
 * nothing alive by itself.
 */
process.on('disconnect', () => process.exit(1));
process.channel?.unref();
