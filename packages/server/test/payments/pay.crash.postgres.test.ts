// Payments across a crash, on PostgreSQL (test/helpers/pay-crash-suite.ts says how); skipped, saying
// so, without TEST_DATABASE_URL.

import { postgresCase } from '../helpers/databases.ts';
import { describePayCrashSuite } from '../helpers/pay-crash-suite.ts';

describePayCrashSuite(postgresCase);
