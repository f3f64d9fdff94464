FR = {}
FR["c3ecab99"] = """# Chapitre 7 — Un statut pour chaque arrêt

**Durée :** environ 35 minutes.

**Prérequis :** le chapitre 3 (la condition hôte) et les chapitres 4 à 6 (les règles de la garde,
les budgets et le délai).

**Ce que vous saurez faire**

- faire se terminer une exécution comme vous l'entendez, en choisissant son script, ses limites ou
  ses capacités accordées ;
- lire le code de sortie d'une exécution, depuis `labkit.run(...).exit_code` et depuis la console,
  et dire ce que peut en conclure un script ou un job de CI qui ne lit que ce code ;
- dire, d'après les événements, si c'est une règle de l'hôte qui a décidé un arrêt ou quelque chose
  d'extérieur à l'hôte, et quelles fins ne sont pas du tout des statuts ;
- décider ce qu'une application doit faire ensuite face à chaque statut."""
FR["ch7-exp1"] = """## Expérience 1 — un outil qui n'existe pas

Une exécution bornée doit se terminer d'une façon sur laquelle l'application peut agir : un
statut, le texte du modèle ou non, et un code de sortie. Commencez par un modèle qui demande, entre
sa lecture et sa conclusion, un outil que l'hôte n'a jamais déclaré. Sa première réponse demande
`read_ticket(input=42)`, sa deuxième `close_ticket(input=42)` (cet outil n'existe pas : l'hôte n'a
que `read_ticket` et `finish_review`), sa troisième `finish_review(input=42)`, et sa quatrième
répond « Review finished. ». Limites par défaut, les deux capacités accordées. Prédisez le statut,
le nombre de `ToolCall`, le code de sortie, et si l'issue conserve le texte du modèle."""
FR["ch7-predict-wrong#hint"] = """Une garde se tient devant le corps de chaque outil : y a-t-il une garde, ou un corps, pour un outil qui n'existe pas ? Que reçoit le modèle en retour, et la boucle peut-elle continuer ensuite ? Lisez ensuite la condition hôte quand la boucle se termine d'elle-même."""
FR["ch7-read-wrong"] = """Aucune règle n'a rien refusé, et rien n'a échoué : `close_ticket` n'est pas un outil de cet hôte, il
n'existe donc ni garde ni corps pour lui, et la boucle a répondu elle-même à l'appel par une erreur
que le modèle lit, sans événement `Middleware` ni `ToolCall`. Le modèle a continué, a terminé sa
revue, la boucle s'est terminée d'elle-même et la condition hôte est remplie : `Completed`, le texte
conservé, code de sortie 0, avec deux événements `ToolCall`. Un appel à un outil inventé est une
erreur du modèle, à laquelle on répond sans la compter ; ce n'est pas un statut. Voici ce que chaque
appel a reçu en retour :"""
FR["ch7-exp2"] = """## Expérience 2 — un script, quatre hôtes

Choisissez maintenant la fin au lieu de la découvrir. Ce modèle relit avant de conclure : il
demande `read_ticket(input=42)` à son premier et à son deuxième appel, `finish_review(input=42)` au
troisième, et répond « Review finished. » au quatrième. Quatre hôtes l'exécutent ; chacun change
une ou deux limites par rapport aux valeurs par défaut (6 appels modèle, 4 tentatives d'outil,
1 tentative par signature, 120 s) et accorde les deux capacités. Prédisez le statut et le code de
sortie de chaque exécution."""
FR["ch7-predict-hosts#hint"] = """Confrontez les quatre appels modèle aux limites de chaque hôte. Combien de tentatives d'un même appel identique chaque hôte autorise-t-il ? Combien de tentatives d'outil au total, et combien d'appels modèle, y compris celui qui lirait le texte final ?"""
FR["ch7-read-hosts"] = """Un script, quatre fins, chacune choisie par les limites de l'hôte. Avec une tentative par
signature, la deuxième lecture identique est refusée (`RepeatedCall`). Avec deux, le modèle conclut
et l'exécution aboutit : le seul code de sortie 0 des quatre. Deux tentatives d'outil au total ne
laissent rien pour `finish_review` (`ToolBudget`). Trois appels modèle permettent de faire le
travail, `finish_review` a réussi, et pourtant le quatrième appel, celui qui aurait lu le texte
final, est refusé (`ModelBudget`) : un arrêt retient le texte et sort avec le code 2 même quand la
condition hôte serait remplie, parce que l'exécution ne s'est pas terminée d'elle-même. Les
événements montrent quel compteur a refusé, et où :"""
FR["e6c3544c"] = """## Expérience 3 — le point d'accès décroche en cours d'exécution

Ce modèle lit le ticket 42 ; puis son point d'accès n'accepte plus de connexions, si bien que le
deuxième appel modèle ne parvient pas à se connecter. Prédisez le statut, le nombre de `ToolCall`
et le tableau complet des événements : chaque événement sous la forme `(kind, name, count)`, dans
l'ordre, par exemple `[("ModelCall", "model", 1), ...]`."""
FR["fc455afb#hint"] = """Parcourez le script appel par appel. Le deuxième appel modèle est-il compté avant que le transport tente de se connecter ? Un événement d'arrêt nommé `model` compte des appels modèle."""
FR["55e7fead"] = """L'erreur de connexion est traduite une seule fois, à la frontière du transport, en
`ProviderUnavailable`. Aucune limite n'a été atteinte et aucune règle n'a rien refusé ; l'hôte
rapporte une défaillance qu'il n'a pas décidée. L'appel qui a échoué a été admis et compté
(`ModelCall` 2) avant que le transport tente de se connecter : un `ModelCall` compte une tentative,
pas une réponse. Les deux agents se terminent de la même façon :"""
FR["ch7-exp4"] = """## Expérience 4 — les codes de sortie depuis la console

La console affiche l'en-tête, les événements et le statut, et son code de sortie est celui que lit
un shell ou un job de CI (`echo $?`). Ici, `console(command)` l'exécute dans le même processus,
affiche la commande et sa ligne de statut (`show="all"` affiche tout), et renvoie ce code. Quatre
commandes, chacune avec le modèle bien élevé (il lit 42, termine 42, puis dit qu'il a fini) :

1. avec `--tool-calls 1` ;
2. avec `--deadline-s 0.5` ;
3. avec `--model-calls 0` ;
4. avec `--model-calls -1`.

Trois codes peuvent revenir ici : 0 quand l'exécution a abouti, 2 quand elle s'est terminée de
toute autre façon (un arrêt, ou `Incomplete`), et 64 quand la console a refusé la commande
elle-même, comme le fait un outil en ligne de commande face à une erreur d'utilisation, avant
qu'aucune exécution ne démarre. Prédisez les quatre codes de sortie, dans l'ordre."""
FR["ch7-predict-console#hint"] = """Pour chaque commande, demandez-vous d'abord si une exécution démarre vraiment : chaque valeur est-elle une limite valide ? Si elle démarre, confrontez le modèle bien élevé à la limite qu'on lui a donnée : l'exécution se termine-t-elle d'elle-même, ou une règle l'arrête-t-elle ? Combien de temps prend une exécution scriptée ?"""
FR["d61650fa"] = """Une tentative d'outil admet la lecture et refuse la conclusion : un arrêt, code 2. Une demi-seconde,
c'est bien plus qu'il n'en faut à une exécution scriptée : le délai ne se déclenche jamais et
l'exécution aboutit, code 0. Zéro appel modèle est une limite comme une autre : le premier appel
modèle est refusé avant d'être envoyé (`ModelBudget`), un arrêt, code 2. Une limite de -1, ce n'est
pas une exécution du tout : la console refuse la commande avant que quoi que ce soit ne démarre et
sort avec le code 64, une erreur d'utilisation, avec une ligne qui dit ce qui est valide. Deux autres
codes n'existent qu'avec un vrai modèle : 76 quand la réponse d'un point d'accès réel est
inexploitable, 78 pour une erreur de configuration de ce vrai modèle (URL incorrecte, profil
invalide).

## Les fins qui ne sont pas des statuts

Un modèle scripté d'une seule étape à qui l'on en demande une deuxième est une fixture de test
cassée, pas un arrêt décidé par l'hôte. L'appel lève une exception ; rien ne la requalifie en statut."""
FR["ch7-not-status"] = """Deux autres fins font intervenir une annulation : celle de l'appelant lui-même (Ctrl+C, une tâche
annulée ; la console sort avec le code 130), et celle d'une bibliothèque cliente du fournisseur qui
annule sa propre requête. Le chapitre 9 exécute les deux, et vous demande ce que devient chacune.

## Les huit scénarios

Voici maintenant tous les scénarios du cours, avec les deux agents : le statut sur lequel chacun se
termine, ses compteurs et son code de sortie (le délai du scénario `deadline` est ramené à 0,2 s
pour que la cellule soit rapide)."""
FR["ch7-library-list"] = """Huit statuts, et la liste qu'en donne la bibliothèque elle-même, avec ce que chacun fait du texte et
son code de sortie. `ProviderUnavailable` retient le texte comme un arrêt (`is_stop`) : l'exécution
s'est terminée avant la dernière réponse du modèle, il n'y a donc pas de texte final à conserver,
bien qu'aucune règle de l'hôte ne l'ait décidé."""
FR["3da83666"] = """Si l'on ajoute qui décide de chacun, l'ensemble que vous venez de construire est le suivant :

| statut | qui décide | texte | code de sortie |
|---|---|---|---|
| `Completed` | la condition hôte, lue quand la boucle se termine d'elle-même | conservé | 0 |
| `Incomplete` | la condition hôte (fausse), lue quand la boucle se termine d'elle-même | conservé, explicitement pas un succès | 2 |
| `PermissionDenied`, `ToolBudget`, `RepeatedCall` | les règles de la garde, avant un corps d'outil | retenu | 2 |
| `ModelBudget` | la règle du client de comptage, avant un appel modèle | retenu | 2 |
| `DeadlineExceeded` | l'unique délai de l'hôte pour l'exécution | retenu | 2 |
| `ProviderUnavailable` | personne : le transport n'a pas pu joindre le modèle ; l'hôte traduit cette défaillance en statut | retenu | 2 |

Et les fins qui ne renvoient aucune issue, ou qui n'exécutent rien :

| fin | ce que reçoit l'appelant | code de sortie |
|---|---|---|
| une erreur de programmation (par exemple un modèle scripté à court d'étapes) | l'exception | non nul |
| une erreur d'utilisation à la console (scénario inconnu, limite invalide) | une ligne qui dit ce qui est valide | 64 |

Ce qu'une application fait d'un statut lui appartient : afficher une réponse partielle, demander
des précisions, réessayer plus tard, passer la main à une personne. labkit ne fait rien de tout
cela de lui-même ; il publie le statut et les événements pour que l'hôte puisse décider."""
FR["ch7-self-check-title"] = """## Auto-vérification"""
FR["ch7-explore"] = """## Explorer

Choisissez un scénario et lisez la ligne de statut ; comparez les deux agents. Puis prédisez un
mystère avec le widget ci-dessous : lisez ses étapes, choisissez un statut et un nombre de
`ToolCall`, puis appuyez sur *Run and check*. (Le panneau d'exploration s'exécute exactement avec
les limites qu'affichent ses curseurs ; son curseur de délai s'arrête à 5 s.)"""
FR["questions"] = """## Questions

**1.** Pourquoi `Incomplete` doit-il sortir avec le code 2 plutôt que 0, alors que rien ne s'est mal
passé dans la boucle ?

<details><summary>Réponse</summary>

Le code 0 signifie « terminé » pour tout script, tout job de CI et tout `&&` du shell qui le lit.
La boucle s'est terminée proprement, mais la condition hôte est fausse : la revue n'a pas été
terminée, et le texte conservé n'est que ce qu'affirme le modèle (la revue à moitié faite du
chapitre 3). Un appelant qui ne lit que le code de sortie ne doit pas le prendre pour un succès.

</details>

**2.** Dans l'expérience 2, l'hôte à trois appels modèle a arrêté une exécution dont la revue était
déjà terminée. Pourquoi retenir le texte et sortir avec le code 2 reste-t-il le bon compte rendu ?

<details><summary>Réponse</summary>

L'exécution ne s'est pas terminée d'elle-même : l'hôte a refusé un appel modèle que la boucle
voulait faire, la conversation a donc été coupée, et on ignore ce que le modèle aurait dit ensuite.
Le statut nomme la règle qui a décidé, et les événements montrent que `finish_review` avait réussi
auparavant ; une application qui a besoin de savoir si le travail a été fait lit l'état de l'hôte
(chapitre 6), pas le code de sortie.

</details>

**3.** Pourquoi est-il utile qu'une exécution `ProviderUnavailable` montre quand même l'appel qui a
échoué sous la forme d'un `ModelCall` ?

<details><summary>Réponse</summary>

Cela montre que la tentative a été comptée avant d'être envoyée : le budget couvre les tentatives
qui échouent, les réessais ne peuvent donc pas lui échapper, et une politique de réessai placée
au-dessus du compteur se voit sous la forme de `ModelCall` supplémentaires. Cela dit aussi quel appel a échoué (ici le deuxième, après un appel d'outil), ce
qui compte pour décider si du travail avait déjà été fait.

</details>

**4.** Quel statut présenteriez-vous à un utilisateur comme « réessayez plus tard » ? Lequel comme
« il nous faut une personne » ?

<details><summary>Réponse</summary>

« Réessayez plus tard » : `ProviderUnavailable` (le point d'accès n'a pas pu être joint), et souvent
`DeadlineExceeded` (lent, pas faux). « Il nous faut une personne » : `PermissionDenied` (quelqu'un
doit accorder ou refuser la capacité), ainsi que `RepeatedCall`, `ToolBudget` et `ModelBudget` (le
modèle est bloqué, ou la tâche demande plus que ce qui est permis : une personne décide s'il faut
relever une limite). `Incomplete` : présentez le texte comme une réponse partielle ou demandez des
précisions à l'utilisateur, jamais comme une tâche terminée.

</details>

**5.** `ProviderUnavailable` sort avec le code 2, comme un arrêt décidé par l'hôte. Pourquoi en faire
un statut à part entière plutôt que de le rapporter, disons, comme `DeadlineExceeded` ?

<details><summary>Réponse</summary>

Parce que la cause et le remède diffèrent. `DeadlineExceeded` dit que la limite de temps propre à
l'hôte s'est écoulée pendant que du travail était en cours ; `ProviderUnavailable` dit que le modèle
n'a pas pu être joint du tout, un fait extérieur que l'hôte n'a pas décidé. Le requalifier
masquerait la vraie cause et enverrait l'opérateur vers la mauvaise correction.

</details>

**6.** `--model-calls -1` est sorti avec le code 64, et non 2. Pourquoi une erreur d'utilisation ne
doit-elle pas partager le code d'un arrêt ?

<details><summary>Réponse</summary>

Un arrêt signifie qu'une exécution a eu lieu et que l'hôte l'a terminée par une règle : ses
événements sont là pour être lus, et changer une limite ou le modèle peut aider. Une erreur
d'utilisation signifie que rien ne s'est exécuté : c'est la commande elle-même qu'il faut corriger.
Un job de CI qui réessaie en cas de code 2 réessaierait indéfiniment une commande cassée si les deux
valaient 2.

</details>"""
FR["ch7-key-points"] = """## Points clés

- Toute exécution qui renvoie une issue se termine sur l'un de huit statuts : `Completed` et
  `Incomplete` (la condition hôte, lue quand la boucle se termine d'elle-même), cinq arrêts décidés
  par les règles de l'hôte (`PermissionDenied`, `ToolBudget`, `RepeatedCall`, `ModelBudget`,
  `DeadlineExceeded`), et `ProviderUnavailable`, une défaillance extérieure que l'hôte traduit en
  statut.
- Un même script se termine différemment selon les limites : l'hôte choisit quelle règle peut
  arrêter une exécution, et les événements montrent laquelle l'a fait.
- Codes de sortie : 0 pour `Completed` seulement ; 2 pour `Incomplete`, pour chaque arrêt et pour
  `ProviderUnavailable` ; 64 pour une erreur d'utilisation ; 130 quand l'appelant annule ; 76 et 78
  avec un vrai modèle seulement.
- Les arrêts retiennent le texte ; `Incomplete` le conserve, avec un statut qui dit « pas terminé ».
- Les erreurs de programmation sont levées, jamais transformées en statut ; une erreur
  d'utilisation à la console, c'est une ligne et le code 64.

**Pour aller plus loin**

- Dans un terminal : `labkit run unavailable; echo $?`, puis `labkit run nope; echo $?`.
- Pour chaque statut, écrivez la ligne que votre application afficherait à un utilisateur.
- Ensuite : le chapitre 8 observe le contrôle à l'œuvre : streaming, lots, plusieurs threads,
  spans."""
FR["ch7-instructor"] = """## Notes pour l'enseignant

<details><summary>Idées reçues fréquentes et pistes de discussion</summary>

**Idées reçues fréquentes**

- « Un outil inventé est refusé par une règle. » Aucune règle n'est consultée : il n'y a pas de garde
  pour un outil qui n'existe pas ; la boucle répond par une erreur, ne compte rien, et l'exécution
  peut encore aboutir (expérience 1). Il en va de même d'un corps qui échoue : la tentative compte, le
  modèle lit l'erreur et la boucle continue. Seuls une règle, le délai ou le fournisseur arrêtent une
  exécution.
- « `Incomplete` est une sorte de succès, puisque rien ne s'est mal passé. » Il sort avec le code 2 :
  le travail n'est pas fait.
- « Si la revue a été terminée, l'exécution devrait être `Completed`. » Pas quand une règle a arrêté
  l'exécution avant (expérience 2, trois appels modèle) : un arrêt nomme la règle qui a décidé.
- « `ProviderUnavailable` est une règle de l'hôte, comme un budget. » Aucune limite n'a été atteinte
  et l'hôte n'a rien décidé : le transport a échoué, et l'hôte *traduit* cette défaillance en
  statut, une seule fois, à la frontière du transport.
- « Un appel modèle qui a échoué n'est pas compté. » Il a été admis et compté avant d'être envoyé.

**Pistes de discussion**

- Pour chaque statut, que doit faire l'application ensuite : réessayer, afficher une réponse
  partielle, interroger l'utilisateur, passer la main à une personne ?
- Pourquoi une équipe pourrait-elle être tentée de ramener toute défaillance à un seul code de
  sortie « erreur », et qu'y perdrait-elle ?

Dans un terminal : `labkit run unavailable; echo $?`, puis `labkit run nope; echo $?`.

</details>"""
