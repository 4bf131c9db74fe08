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


def candidates(key):
    """Values at the edges of what the key accepts, as `gsettings set` would be given them."""
    texts = [key.get_default_value().print_(False), "true", "'text'", "7", "[7]", "(1, 2)", "@as []"]
    kind, detail = key.get_range().unpack()
    type_string = key.get_value_type().dup_string()
    if kind == "range":
        low, high = detail
        if type_string == "d":
            texts += [repr(float(low)), repr(float(high)), repr(float(low) - 1), repr(float(high) + 1)]
        else:
            texts += [str(low), str(high), str(low - 1), str(high + 1)]
    elif kind == "enum":
        texts += [GLib.Variant("s", nick).print_(False) for nick in detail] + ["'no-such-nick'"]
    elif kind == "flags":
        texts += [GLib.Variant("as", [nick]).print_(False) for nick in detail] + ["['no-such-flag']"]
        texts += [GLib.Variant("as", list(detail)).print_(False)]
    default = key.get_default_value()
    if default.get_type().is_tuple() and default.n_children() > 0:
        members = [default.get_child_value(i).print_(True) for i in range(default.n_children())]
        texts += ["(" + ", ".join(members[:-1]) + ("," if len(members) == 2 else "") + ")"]
        texts += ["(" + ", ".join(members + [members[-1]]) + ")"]
    if type_string == "as":
        texts += ["[1]", "['a', 'b']"]
    if type_string in ("ai", "au", "ad"):
        texts += ["['x']", "[1, 2]", "[-1]"]
    if type_string in ("i", "u", "n", "q", "y", "x", "t"):
        texts += ["-1", "2147483648", "4294967296", "-2147483649", "1.5"]
    return texts


def differential():
    """Every key of every installed schema with a path, with GLib's verdict on each candidate."""
    rows = []
    for schema_id in sorted(source.list_schemas(True)[0]):
        schema = source.lookup(schema_id, True)
        for name in sorted(schema.list_keys()):
            key = schema.get_key(name)
            for text in candidates(key):
                try:
                    value = GLib.Variant.parse(key.get_value_type(), text, None, None)
                    accepted = key.range_check(value)
                except GLib.Error:
                    accepted = False
                rows.append({"schema": schema_id, "path": schema.get_path(), "key": name,
                             "type": key.get_value_type().dup_string(), "text": text, "accepted": accepted})
    return rows


for line in sys.stdin:
    request = json.loads(line)
    if request.get("differential"):
        sys.stdout.write(json.dumps({"ok": True, "rows": differential()}) + "\n")
        continue
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
