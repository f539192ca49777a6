from django.db import migrations

CURATOR_PERMISSIONS = [
    f"{action}_{model}"
    for model in ("study", "guidanceitem")
    for action in ("add", "change", "delete", "view")
] + ["view_identifiercheck"]


def create_curator_group(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="curator")
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="evidence", codename__in=CURATOR_PERMISSIONS)
    )


def remove_curator_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="curator").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("evidence", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    operations = [migrations.RunPython(create_curator_group, remove_curator_group)]
