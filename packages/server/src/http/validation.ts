// Route schemas are compiled by our validator (api/validation.ts), which knows the error shape every
// route answers with.
import { ErrorSchema } from '../api/schemas.ts';
import { addSharedSchema, validatorCompiler } from '../api/validation.ts';
import type { App } from '../app-type.ts';

export function schemaValidation(app: App) {
  app.setValidatorCompiler(validatorCompiler);
  addSharedSchema(ErrorSchema);
  app.addSchema(ErrorSchema);
}
