"""The trainers: REINFORCE for every learned method and the supervised detector."""
