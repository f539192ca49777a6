from django.contrib import admin

from chat.models import Conversation, Message


class MessageInline(admin.TabularInline):
    model = Message
    readonly_fields = ("role", "content", "settings_hash", "created_at")
    fields = readonly_fields
    extra = 0
    can_delete = False


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["__str__", "user", "app", "updated_at"]
    list_filter = ["app"]
    search_fields = ["title", "user__username"]
    list_select_related = ["user"]
    readonly_fields = ["user", "app", "created_at", "updated_at"]
    inlines = [MessageInline]
