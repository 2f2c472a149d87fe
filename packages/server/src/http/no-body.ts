// A POST that takes no body (its schema is api/schemas.ts NoBody) refuses a JSON `null` too: added to
// each such route as it is registered.
import { hooksOf, refuseNullBody, takesNoBody } from '../api/schemas.ts';
import type { App } from '../app-type.ts';

export function refuseNullBodies(app: App) {
  app.addHook('onRoute', (route) => {
    if (takesNoBody(route.schema)) route.preValidation = [refuseNullBody, ...hooksOf(route.preValidation)];
  });
}
