// Schemas shared by the pay-page API's operations.
import Type from 'typebox';
import { GROUP_LIMITS } from '../../domain/group-config.ts';
import { PlainText } from '../../wire/schemas.ts';

/**
 * ?access=TOKEN: the organizer's access token or the group access token. Optional here: a missing or empty
 * token is refused as an unknown one is, 401 invalid_access_token (docs/api.md#pay-page-tokens), by the
 * plugin's token check (index.ts).
 */
export const AccessQuery = Type.Object(
  { access: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);

export const MemberName = PlainText(GROUP_LIMITS.maxNameLength, { required: true });
export const MemberEmail = Type.String({ format: 'email', maxLength: GROUP_LIMITS.maxEmailLength });
