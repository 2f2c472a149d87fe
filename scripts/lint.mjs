// Biome on the files git knows about (tracked, or staged to be), never on untracked scratch files.
// Biome's VCS integration (biome.json) skips what .gitignore ignores, but has no setting for untracked
// files (--staged and --changed check other subsets), so the list comes from `git ls-files`. Outside a
// git checkout every file under the root is checked. Arguments go to `biome check` (e.g. --write).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');

const git = spawnSync('git', ['ls-files', '-z', '--cached'], { cwd: root, encoding: 'utf8' });
let paths;
if (git.status === 0) {
  // Tracked files deleted in the working tree are not there to check.
  paths = git.stdout.split('\0').filter((path) => path && existsSync(`${root}/${path}`));
} else {
  console.log('note: not a git checkout: Biome checks every file under the root.');
  paths = ['.'];
}

const result = spawnSync(
  process.execPath,
  [
    biome,
    'check',
    // Git also tracks files Biome has no language for (Markdown, .gitignore, .ci/run).
    '--files-ignore-unknown=true',
    '--no-errors-on-unmatched',
    ...process.argv.slice(2),
    ...paths,
  ],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
