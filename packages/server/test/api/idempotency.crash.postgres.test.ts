// Idempotency across a crash, on PostgreSQL (test/helpers/crash-suite.ts says how).

import { describeCrashSuite } from '../helpers/crash-suite.ts';
import { postgresCase } from '../helpers/databases.ts';

describeCrashSuite(postgresCase, 5);
