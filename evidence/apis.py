from rest_framework import viewsets

from evidence.models import Study


class StudyViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Study.objects.all()
