"""GLib itself, as the tests' oracle: one JSON request a line on stdin, one answer a line out.

A request is {"text": T} or {"text": T, "type": "au"}, optionally with "schema" and "key": the
text is parsed with g_variant_parse (the key's type when a schema is named, as `gsettings set`
does) and printed back with g_variant_print(value, TRUE); with a schema, the answer also says
whether g_settings_schema_key_range_check accepts the value.
"""
import json
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

source = Gio.SettingsSchemaSource.get_default()

for line in sys.stdin:
    request = json.loads(line)
    try:
        key = None
        type_string = request.get("type")
        if "schema" in request:
            schema = source.lookup(request["schema"], True)
            key = schema.get_key(request["key"])
            type_string = key.get_value_type().dup_string()
        variant_type = GLib.VariantType.new(type_string) if type_string else None
        value = GLib.Variant.parse(variant_type, request["text"], None, None)
        answer = {"ok": True, "printed": value.print_(True), "type": value.get_type_string()}
        if key is not None:
            answer["inRange"] = key.range_check(value)
    except GLib.Error as error:
        answer = {"ok": False, "error": error.message}
    sys.stdout.write(json.dumps(answer) + "\n")
sys.stdout.flush()
