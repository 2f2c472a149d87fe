// The built SDK the tests load (the service serves packages/sdk/dist). A build older than its sources
// would test old code, so it is refused with the command that rebuilds it.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The path of dist/<file>, after checking that it is newer than every file in src/. */
export function builtFile(file: string): string {
  const path = join(root, 'dist', file);
  const built = statSync(path, { throwIfNoEntry: false });
  const newestSource = Math.max(
    // The .ts sources only: run compiled (scripts/test.mjs), src/ also holds the JavaScript made from them.
    ...readdirSync(join(root, 'src'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => statSync(join(root, 'src', f)).mtimeMs),
  );
  if (!built || built.mtimeMs < newestSource) {
    throw new Error(`${path} is missing or older than src/: run npm run build -w @group-checkout/sdk`);
  }
  return path;
}
