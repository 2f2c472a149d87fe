// Idempotency across a crash, on SQLite, 5 times (test/helpers/crash-suite.ts says how).

import { describeCrashSuite } from '../helpers/crash-suite.ts';
import { sqliteCase } from '../helpers/databases.ts';

describeCrashSuite(sqliteCase, 5);
