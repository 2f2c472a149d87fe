// Preloaded (--import) into every server the benchmark starts: when the parent goes away without
// cleaning up (killed with SIGKILL, say), the IPC channel closes and the child stops itself.
process.on('disconnect', () => {
  process.kill(process.pid, 'SIGTERM');
  setTimeout(() => process.exit(1), 3000).unref();
});
