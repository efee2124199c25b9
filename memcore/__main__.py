from memcore.cli import main

main()
