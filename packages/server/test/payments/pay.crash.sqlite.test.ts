// Payments across a crash, on SQLite (test/helpers/pay-crash-suite.ts says how).

import { sqliteCase } from '../helpers/databases.ts';
import { describePayCrashSuite } from '../helpers/pay-crash-suite.ts';

describePayCrashSuite(sqliteCase);
