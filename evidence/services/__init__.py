"""Write-side services of the evidence app (HackSoft style: views and tasks call these)."""
